// Package notebook holds what the notebooks share, so that their cells show the research and not
// the plumbing: the budget knob (Budget, Resolve), where results go (ResultsDir), training several
// specs under one progress bar that stops cleanly on Kernel > Interrupt (Train), reading the runs
// back for the cells that depend on them (Load), filters over runs (Where, Label, Values, SeedSeries)
// and charts side by side (Row).
//
// It sits at the top of the package flow (it uses engine, results, plots and progress; nothing uses
// it) and works outside a notebook too, where it prints plain text.
package notebook
