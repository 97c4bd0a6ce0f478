// Package report turns the runs of a results directory (package results) into what a researcher
// reads: tables over seeds (NewTable, as Markdown or LaTeX, with significance marks and notes on
// diverged runs and on posterior health), groups of runs and their learning curves (GroupRuns,
// Curves), a tidy export of every row (NewTidy), the papers' order of methods (PaperRank) and the
// verdict on whether a run's variances learned (RunHealth).
//
// Summaries over seeds (stats.Summarize) are the mean and the standard error of the mean (sample standard
// deviation with the n-1 denominator, divided by sqrt(n)), the statistic of the tables of Ozer et
// al. (2022, Tables 1 and 3) and Hasan (2023, Tables 3.1-4.2). Tables render as Markdown or as a
// LaTeX booktabs tabular, baselines first and then the rules in the papers' order, bolding the
// cells of a column only where a difference to its best is significant (BoldSignificant).
package report
