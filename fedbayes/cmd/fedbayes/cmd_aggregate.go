package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/aggregate"
)

func init() {
	register(&command{name: "aggregate", summary: "aggregate univariate Gaussian clients with one rule or all (toy form)",
		run: runAggregate})
}

// clientArg matches a client given as "mean,variance" (so that a negative mean is not a flag).
var clientArg = regexp.MustCompile(`^[-+]?[0-9.]+([eE][-+]?[0-9]+)?,[-+]?[0-9.]+([eE][-+]?[0-9]+)?$`)

// aggregateRow is one line of `fedbayes aggregate` output.
type aggregateRow struct {
	Rule     string  `json:"rule"`
	Mean     float64 `json:"mean"`
	Variance float64 `json:"variance"`
	Std      float64 `json:"std"`
	Error    string  `json:"error,omitempty"`
}

func runAggregate(args []string, stdout io.Writer) error {
	fs := newFlagSet("aggregate", "MEAN,VARIANCE MEAN,VARIANCE ...", stdout)
	rule := fs.String("rule", "all", "rule: "+ruleNames()+", or all")
	weightsFlag := fs.String("w", "", "client weights, comma-separated (default equal)")
	normalize := fs.Bool("normalize", false, "normalise weights that do not sum to one")
	prevFlag := fs.String("prev", "", "previous global MEAN,VARIANCE (needed by DWC)")
	policy := fs.String("dwc-policy", "keep-previous", "DWC where the combined precision is not positive: keep-previous, conflation or error")
	n := fs.Int("n", aggregate.DefaultPopulationSize, "PPA population size")
	seed := fs.Int64("seed", 1, "PPA seed")
	asJSON := fs.Bool("json", false, "print a JSON list of {rule, mean, variance, std, error}")
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		a := args[i]
		if !strings.HasPrefix(a, "-") || clientArg.MatchString(a) {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		// A non-boolean flag without "=" takes the next argument as its value (which may look like
		// a client, as in -w 0.5,0.5).
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && i+1 < len(args) {
			if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					flags = append(flags, args[i+1])
					i++
				}
			}
		}
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Args()[0])
	}
	if len(positional) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: give at least one client as MEAN,VARIANCE", errUsage)
	}
	clients := make([]aggregate.Gaussian, len(positional))
	for k, a := range positional {
		g, err := parsePair(a)
		if err != nil {
			return fmt.Errorf("%w: client %d: %v", errUsage, k, err)
		}
		clients[k] = g
	}
	opt := aggregate.Options{Normalize: *normalize, PopulationSize: *n, Seed: *seed}
	var err error
	if opt.DWCPolicy, err = parsePolicy(*policy); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *prevFlag != "" {
		g, err := parsePair(*prevFlag)
		if err != nil {
			return fmt.Errorf("%w: -prev: %v", errUsage, err)
		}
		opt.Previous = &g
	}
	var weights []float64
	if *weightsFlag != "" {
		for i, s := range strings.Split(*weightsFlag, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return fmt.Errorf("%w: -w: weight %d %q is not a number", errUsage, i, s)
			}
			weights = append(weights, v)
		}
	}
	rules := aggregate.Rules()
	if !strings.EqualFold(*rule, "all") {
		r, err := aggregate.ParseRule(*rule)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		rules = []aggregate.Rule{r}
	}
	var rows []aggregateRow
	for _, r := range rules {
		g, err := aggregate.Scalar(r, clients, weights, opt)
		if err != nil {
			if len(rules) == 1 {
				return err
			}
			rows = append(rows, aggregateRow{Rule: string(r), Error: err.Error()})
			continue
		}
		rows = append(rows, aggregateRow{Rule: string(r), Mean: g.Mean, Variance: g.Var, Std: math.Sqrt(g.Var)})
	}
	if *asJSON {
		return writeJSON(stdout, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rule\tmean\tvariance\tstd\t")
	for _, row := range rows {
		if row.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\n", row.Rule, strings.TrimPrefix(row.Error, "aggregate: "))
			continue
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%.6g\t%.6g\t\n", row.Rule, row.Mean, row.Variance, row.Std)
	}
	return tw.Flush()
}

func parsePair(s string) (aggregate.Gaussian, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return aggregate.Gaussian{}, fmt.Errorf("%q is not MEAN,VARIANCE", s)
	}
	m, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	v, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil {
		return aggregate.Gaussian{}, fmt.Errorf("%q is not MEAN,VARIANCE (two numbers)", s)
	}
	return aggregate.Gaussian{Mean: m, Var: v}, nil
}

func parsePolicy(s string) (aggregate.DWCPolicy, error) {
	for _, p := range []aggregate.DWCPolicy{aggregate.DWCKeepPrevious, aggregate.DWCUseConflation, aggregate.DWCFail} {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown DWC policy %q (keep-previous, conflation or error)", s)
}

func ruleNames() string {
	var names []string
	for _, r := range aggregate.Rules() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}
