package notebook

import (
	"os"
	"strings"
	"testing"
)

// An interrupt in any cell (not only a training one) ends it with a clean line outside Train;
// during Train it is left to Train, which stops between two steps.
func TestWatchInterrupts(t *testing.T) {
	defer func() { exit = os.Exit }()
	for _, training := range []bool{false, true} {
		code := -1
		exit = func(c int) { code = c }
		if training {
			trainActive.Add(1)
		}
		sig := make(chan os.Signal, 1)
		sig <- os.Interrupt
		close(sig)
		var out strings.Builder
		watchInterrupts(sig, &out)
		if training {
			trainActive.Add(-1)
		}
		wantCode := 1
		if training {
			wantCode = -1
		}
		if code != wantCode || (code == 1) != strings.Contains(out.String(), "interrupted (Kernel > Interrupt)") {
			t.Errorf("training %v: exit %d, stdout %q", training, code, out.String())
		}
	}
}
