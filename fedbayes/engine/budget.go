package engine

import (
	"fmt"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/internal/words"
)

// Budget is what a setting actually runs: the examples it trains and tests on, the clients, the
// rounds, the local epochs and the seeds. It is computed from the spec that runs (describeBudget),
// never copied from a preset's label, so that an overridden budget is recorded as it ran.
type Budget struct {
	// Dataset is the dataset's name.
	Dataset string
	// Train and Test are the numbers of training and test examples used: the subsample when one is
	// set and smaller than the dataset, else the dataset's size; -1 when the dataset could not be
	// read (then Subsample and TestSubsample say what was asked for).
	Train, Test int
	// Subsample and TestSubsample are the spec's dataset.subsample and dataset.test_subsample (0:
	// all).
	Subsample, TestSubsample int
	// Clients is C, the number of clients.
	Clients int
	// Rounds is T and Epochs is E (Spec.Training).
	Rounds, Epochs int
	// Seeds is the number of seeds.
	Seeds int
}

// BudgetOf returns the budget of s (with defaults applied here) on a training set of trainLen and
// a test set of testLen examples (-1 for unknown).
func BudgetOf(s *Spec, trainLen, testLen int) Budget {
	d := s.WithDefaults()
	used := func(sub, n int) int {
		if n < 0 {
			return -1
		}
		if sub > 0 && sub < n {
			return sub
		}
		return n
	}
	return Budget{
		Dataset: d.Dataset.Name,
		Train:   used(d.Dataset.Subsample, trainLen), Test: used(d.Dataset.TestSubsample, testLen),
		Subsample: d.Dataset.Subsample, TestSubsample: d.Dataset.TestSubsample,
		Clients: d.Partition.Clients, Rounds: d.Training.Rounds, Epochs: d.Training.LocalEpochs,
		Seeds: len(d.Seeds),
	}
}

// String states the budget in one line, for run.json, tables and figure titles: for example
// "digits: 1,000 training / 300 test examples, 10 clients, T=2 rounds, E=1 local epoch, 2 seeds".
func (b Budget) String() string {
	return fmt.Sprintf("%s: %s training / %s test examples, %d clients, T=%d %s, E=%d local %s, %d %s",
		b.Dataset, examplesText(b.Train, b.Subsample, "at most "), examplesText(b.Test, b.TestSubsample, "at most "), b.Clients,
		b.Rounds, words.Plural(b.Rounds, "round"), b.Epochs, words.Plural(b.Epochs, "epoch"), b.Seeds, words.Plural(b.Seeds, "seed"))
}

// Short is the budget without the dataset and clients, for figure titles: "T=2, E=1, 2 seeds,
// 1,000 / 300 examples".
func (b Budget) Short() string {
	return fmt.Sprintf("T=%d, E=%d, %d %s, %s / %s examples", b.Rounds, b.Epochs, b.Seeds, words.Plural(b.Seeds, "seed"),
		examplesText(b.Train, b.Subsample, "≤"), examplesText(b.Test, b.TestSubsample, "≤"))
}

// examplesText states a count of examples: n when it was read (n >= 0), else the subsample asked
// for after atMost, else "all".
func examplesText(n, asked int, atMost string) string {
	switch {
	case n >= 0:
		return words.Thousands(n)
	case asked > 0:
		return atMost + words.Thousands(asked)
	}
	return "all"
}

// describeBudget is the budget of a setting's spec, reading the dataset's size through the run's
// cache (the runs load it anyway). A dataset that cannot be read gives the sizes asked for (the run
// then fails with the loading error). With a server share (dataset.server_fraction), the training
// examples counted include the server's.
func describeBudget(s *Spec, cache *datasetCache) Budget {
	train, test := -1, -1
	dir := s.Dataset.Dir
	if dir == "" {
		dir = data.Dir()
	}
	if tr, te, err := cache.load(s.Dataset.Name, dir, 0); err == nil {
		train, test = tr.Len(), te.Len()
	}
	return BudgetOf(s, train, test)
}
