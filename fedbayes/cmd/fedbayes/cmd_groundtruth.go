package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"fedbayes.dev/fedbayes/groundtruth"
	"fedbayes.dev/fedbayes/results"
)

func init() {
	register(&command{name: "ground-truth", summary: "measure every aggregation rule against the exact global posterior (Bayesian linear regression)", run: runGroundTruth})
}

// groundTruthFlags are the flags of `fedbayes ground-truth`, kept for the reproducing command line.
type groundTruthFlags struct {
	split         string
	heterogeneity float64
	clients       int
	dims          int
	perClient     int
	test          int
	correlation   float64
	seed          uint64
	seeds         int
	population    int
	rounds        int
	likelihood    string
	hmcWarmup     int
	hmcSamples    int
	out           string
	doc           string
}

// commandLine returns the command line that reproduces a run with these flags.
func (f groundTruthFlags) commandLine() string {
	parts := []string{"fedbayes ground-truth"}
	if f.split != "all" {
		parts = append(parts, "-split "+f.split, fmt.Sprintf("-het %g", f.heterogeneity), "-likelihood "+f.likelihood)
	}
	parts = append(parts, fmt.Sprintf("-clients %d -dims %d -n %d -test %d -corr %g -seed %d -seeds %d -rounds %d",
		f.clients, f.dims, f.perClient, f.test, f.correlation, f.seed, f.seeds, f.rounds))
	if f.population != 0 {
		parts = append(parts, fmt.Sprintf("-ppa-n %d", f.population))
	}
	if def := groundtruth.DefaultHMC(); f.hmcWarmup != def.Warmup || f.hmcSamples != def.Samples {
		parts = append(parts, fmt.Sprintf("-hmc-warmup %d -hmc-samples %d", f.hmcWarmup, f.hmcSamples))
	}
	return strings.Join(parts, " ")
}

func runGroundTruth(args []string, stdout io.Writer) error {
	fs := newFlagSet("ground-truth", "", stdout)
	def := groundtruth.DefaultConfig()
	var f groundTruthFlags
	fs.StringVar(&f.split, "split", "all", "client split: all (every regime and sweep of docs/ground-truth.md), or one of "+splitNames())
	fs.Float64Var(&f.heterogeneity, "het", 1, "heterogeneity of the split, 0 (IID) to 1 (with -split other than all)")
	fs.IntVar(&f.clients, "clients", def.Clients, "number of clients K")
	fs.IntVar(&f.dims, "dims", def.Dims, "number of weights d")
	fs.IntVar(&f.perClient, "n", def.PerClient, "mean number of examples per client")
	fs.IntVar(&f.test, "test", def.Test, "number of held-out examples")
	fs.Float64Var(&f.correlation, "corr", def.Correlation, "correlation between any two input features, in [0, 1)")
	fs.Uint64Var(&f.seed, "seed", def.Seed, "first seed")
	fs.IntVar(&f.seeds, "seeds", 5, "number of seeds (seed, seed+1, ...), averaged in the tables")
	fs.IntVar(&f.population, "ppa-n", 0, "PPA's population size N (0: 1000)")
	fs.IntVar(&f.rounds, "rounds", groundtruth.DefaultRounds, "federated rounds T of every rule under the fixed and the updated prior (linear regimes; 0: one round only)")
	fs.StringVar(&f.likelihood, "likelihood", "linear", "linear (exact posterior) or logistic (HMC reference), with -split other than all")
	hmcDef := groundtruth.DefaultHMC()
	fs.IntVar(&f.hmcWarmup, "hmc-warmup", hmcDef.Warmup, "HMC warmup iterations per chain (logistic)")
	fs.IntVar(&f.hmcSamples, "hmc-samples", hmcDef.Samples, "HMC kept iterations per chain (logistic)")
	fs.StringVar(&f.out, "o", filepath.Join("results", "ground-truth"), "output directory (study.json, ground-truth.md and the HMC references' cache, hmc/)")
	fs.StringVar(&f.doc, "doc", "", "also write the findings page to this path (e.g. docs/ground-truth.md)")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if f.seeds < 1 || f.seeds > 1000 {
		return fmt.Errorf("-seeds %d: want 1 to 1000", f.seeds)
	}
	if f.rounds < 0 || f.rounds > 10000 {
		return fmt.Errorf("-rounds %d: want 0 to 10000", f.rounds)
	}
	if f.out == "" {
		return fmt.Errorf("-o: an output directory is needed")
	}
	base := def
	base.Clients, base.Dims, base.PerClient, base.Test = f.clients, f.dims, f.perClient, f.test
	base.Correlation, base.Seed = f.correlation, f.seed
	var study groundtruth.Study
	if f.split == "all" {
		study = groundtruth.DefaultStudy(base, f.seeds)
	} else {
		sp, err := groundtruth.ParseSplit(f.split)
		if err != nil {
			return err
		}
		f.split = string(sp)
		c := base
		c.Split, c.Heterogeneity, c.Likelihood = sp, f.heterogeneity, groundtruth.Likelihood(f.likelihood)
		group, name := groundtruth.GroupRegimes, fmt.Sprintf("%s (h = %g)", sp, f.heterogeneity)
		if c.Likelihood == groundtruth.Logistic {
			group, name = groundtruth.GroupLogistic, "logistic, "+name
		}
		study = groundtruth.DefaultStudy(base, f.seeds)
		study.Scenarios = []groundtruth.Scenario{{Group: group, Name: name, X: f.heterogeneity, Config: c}}
	}
	study.PopulationSize = f.population
	study.Rounds = f.rounds
	study.HMC.Warmup, study.HMC.Samples = f.hmcWarmup, f.hmcSamples
	study.Cache = filepath.Join(f.out, "hmc")
	if err := study.HMC.Validate(); err != nil {
		return err
	}
	// Check every scenario before running any.
	for _, sc := range study.Scenarios {
		if err := sc.Config.Validate(); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	res, err := groundtruth.RunStudy(study, func(done, total int) {
		fmt.Fprintf(stdout, "ground-truth: %d/%d scenarios\n", done, total)
	})
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the results: %w", err)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("-o %s: %w", f.out, err)
	}
	page := []byte(groundtruth.Markdown(res, f.commandLine()))
	for path, data := range map[string][]byte{
		filepath.Join(f.out, "study.json"):      append(raw, '\n'),
		filepath.Join(f.out, "ground-truth.md"): page,
	} {
		if err := results.WriteFileAtomic(path, data, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "ground-truth: wrote %s and %s\n", filepath.Join(f.out, "study.json"), filepath.Join(f.out, "ground-truth.md"))
	if f.doc != "" {
		if err := results.WriteFileAtomic(f.doc, page, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "ground-truth: wrote %s\n", f.doc)
	}
	return nil
}

func splitNames() string {
	var s []string
	for _, sp := range groundtruth.Splits() {
		s = append(s, string(sp))
	}
	return strings.Join(s, ", ")
}
