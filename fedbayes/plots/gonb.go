package plots

import (
	"fmt"
	"os"

	"github.com/janpfeifer/gonb/gonbui"
)

// LoaderEnv names the notebook root that DisplayLibrary copies the ECharts bundle into and loads it
// from (kernels/launch sets it to the repository's notebooks/ folder when Jupyter serves it).
const LoaderEnv = "FEDBAYES_NOTEBOOK_ROOT"

// InlineEnv set to 1 makes DisplayLibrary inline the bundle (LibraryHTML) even under a server, as
// headless runs need for their exported HTML (kernels/run-notebooks sets it).
const InlineEnv = "FEDBAYES_INLINE_CHARTS"

// DisplayLibrary makes ECharts available to the charts of a GoNB notebook page: call it once, in an
// early cell, before Display. Under a Jupyter server whose notebook root is $FEDBAYES_NOTEBOOK_ROOT
// it copies the bundle there (InstallLibraryCopy) and shows LibraryLoaderHTML, so that a saved
// notebook does not hold the 1 MB library; otherwise, or with FEDBAYES_INLINE_CHARTS=1, it shows
// LibraryHTML (the bundle inlined, which also works in exported HTML). Outside GoNB it does nothing
// (and still reports a missing ECharts).
func DisplayLibrary() error {
	lib, err := libraryForPage(os.Getenv(LoaderEnv), os.Getenv(InlineEnv))
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(lib)
	return syncDisplay()
}

// libraryForPage returns the loader when root is set and inline is not "1", after installing the
// bundle's copy under root, else the inlined library.
func libraryForPage(root, inline string) (string, error) {
	if root == "" || inline == "1" {
		return LibraryHTML()
	}
	if _, err := InstallLibraryCopy(root); err != nil {
		return "", err
	}
	return LibraryLoaderHTML(), nil
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
