package notebook

import (
	"bytes"
	"io"

	"fedbayes.dev/fedbayes/progress"
)

// LineProgress is an io.Writer for the progress log of a runner that reports in lines
// (predictive.Run): it cuts what it is given into whole lines, asks Advance
// what each line means, writes the lines to show to W and advances Bar by the steps they count.
// A notebook thus gets one progress bar, with an ETA, over a runner that only prints.
type LineProgress struct {
	// W receives the lines shown (nil: none).
	W io.Writer
	// Bar is advanced by the steps counted (nil: none); LineProgress calls only its Update.
	Bar progress.Reporter
	// Advance says, for one line without its newline, by how many steps it advances the bar and
	// whether to show it.
	Advance func(line string) (steps int, show bool)
	// Done counts the steps so far.
	Done int

	buf []byte
}

// Write implements io.Writer. It never fails: a line that cannot be shown is not an error of the
// run that logs it.
func (l *LineProgress) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		steps, show := l.Advance(line)
		if show && l.W != nil {
			_, _ = io.WriteString(l.W, line+"\n")
		}
		if steps > 0 {
			l.Done += steps
			if l.Bar != nil {
				l.Bar.Update(l.Done, nil, progress.Timings{})
			}
		}
	}
}
