package report

// PaperRank returns the rank of a row label value in the papers' order (OrderPaper): baselines
// first, then the aggregation rules as RuleOrder lists them (aliases rank as their rule), then one
// rank shared by every other value. Figures sort their series by it (a stable sort, so values of
// the same rank keep their order), so that a legend lists its series as the tables list their rows.
func PaperRank(value string) int { return paperRank(value) }
