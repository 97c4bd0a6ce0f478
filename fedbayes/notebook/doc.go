// Package notebook holds what the notebooks share, so that their cells show the research and not
// the plumbing: the budget knob (Budget, Resolve, Knob, PerBudget), where results go (ResultsDir,
// SpecDir), the budget and expected time each notebook prints first (Start, Times), spec builders
// (PresetSpec, Sweep, FedAvgBaseline), training several engine specs under one progress bar with
// learning curves drawn as they come (Train, LiveCurves; multi-round FedBE runs through it as engine
// specs), Kernel > Interrupt stopping Run All (Check ends the interrupted cell as an error; the kernel
// aborts the cells queued after it), reading the runs back for the cells that depend on them, checked as run
// --resume checks them (Load, LoadDir), filters and groupings over runs (Where, Label, Values,
// SeedSeries, FinalVersus, Pick, PickMethods by the strategy registry's method names),
// tables (ShowTable, TextTable, MeanSE), the posterior health of rules that combine variances
// (HealthTable, ShowHealth) and charts (Show, Row), the FedBE anatomy of notebook 05
// (NewFederation, FedBEAnatomy) and the uncertainty study of notebook 03 (StudySpec, TrainStudy,
// Study and its calibration, decomposition, retention and out-of-distribution tables).
//
// It sits at the top of the package flow (it uses engine, results, plots and progress; nothing uses
// it) and works outside a notebook too, where it prints plain text.
package notebook
