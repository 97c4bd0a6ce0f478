package jpyexec

// fedbayes addition to GoNB (kernels/gonb-overlay): a file the overlay adds to package jpyexec,
// not a patched copy of an upstream file.

import (
	"errors"
	osexec "os/exec"

	"github.com/janpfeifer/gonb/internal/kernel"
)

// ErrInterruptedBeforeStart is Exec's error when Kernel > Interrupt came before the program started
// (while GoNB compiled the cell): the program is not started.
var ErrInterruptedBeforeStart = errors.New("interrupted (Kernel > Interrupt) before it started; run the cell again to run it")

// EndedAfterInterrupt reports whether err, the error of a cell program's run, says that the program
// exited by itself (with an exit status, not killed by a signal) while k was interrupted (Kernel >
// Interrupt): the program caught the interrupt and said so itself (fedbayes's cells print where
// they stopped and exit with status 1), so GoNB's own "exit status 1" would only repeat it.
func EndedAfterInterrupt(k *kernel.Kernel, err error) bool {
	var exitErr *osexec.ExitError
	return k != nil && k.Interrupted.Load() && errors.As(err, &exitErr) && exitErr.ExitCode() >= 0
}
