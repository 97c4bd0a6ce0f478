package plots

import (
	"fmt"

	"github.com/janpfeifer/gonb/gonbui"
)

// DisplayLibrary shows LibraryHTML as a cell output in a GoNB notebook: call it once, in an early
// cell, before Display. Outside GoNB it does nothing (and still reports a missing ECharts).
func DisplayLibrary() error {
	lib, err := LibraryHTML()
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(lib)
	return syncDisplay()
}

// Display shows a chart as a cell output in a GoNB notebook (ChartHTML, with a new unique id).
// Outside GoNB it does nothing.
func Display(c *Chart) error {
	h, err := ChartHTML(c)
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(h)
	return syncDisplay()
}

// Update replaces the output block displayID (any string, e.g. from gonbui.UniqueId) with the
// chart, creating the block the first time: interactive cells (sliders) redraw a chart this way.
// Outside GoNB it does nothing.
func Update(displayID string, c *Chart) error {
	if c == nil {
		return fmt.Errorf("plots: Update with a nil chart")
	}
	if displayID == "" {
		return fmt.Errorf("plots: Update of chart %q: empty display id", c.Name)
	}
	h, err := ChartHTML(c)
	if err != nil {
		return err
	}
	gonbui.UpdateHTML(displayID, h)
	return syncDisplay()
}

// syncDisplay waits until GoNB has passed the output on to the front end. Without it, an output
// sent as the last action of a cell can be lost when the cell's program exits (seen with the 1 MB
// library block), leaving every chart blank.
func syncDisplay() error {
	if gonbui.IsNotebook {
		gonbui.Sync()
	}
	return gonbui.Error()
}
