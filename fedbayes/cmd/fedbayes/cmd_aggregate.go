package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/explore"
)

func init() {
	register(&command{name: "aggregate", summary: "aggregate univariate Gaussian clients with one rule or all (toy form)",
		run: runAggregate})
}

// clientArg matches a client given as "mean,variance" (so that a negative mean such as -1,2 or
// -Inf,1 is read as a client, not as a flag).
var clientArg = regexp.MustCompile(`^[-+]?([0-9.]+([eE][-+]?[0-9]+)?|(?i:inf|infinity|nan)),[-+]?([0-9.]+([eE][-+]?[0-9]+)?|(?i:inf|infinity|nan))$`)

// aggregateRow is one line of `fedbayes aggregate` output.
type aggregateRow struct {
	Rule     string    `json:"rule"`
	Mean     jsonFloat `json:"mean"`
	Variance jsonFloat `json:"variance"`
	Std      jsonFloat `json:"std"`
	Error    string    `json:"error,omitempty"`
}

// jsonFloat is a float64 that encodes NaN and infinities as the strings "NaN", "+Inf" and "-Inf"
// (JSON has no such numbers), so that one such value never loses the whole output.
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// populationFlag is PPA's -n: an integer, also written as 1e6, in [2, aggregate.MaxPopulationSize].
type populationFlag int

func (p *populationFlag) String() string { return strconv.Itoa(int(*p)) }

func (p *populationFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != math.Trunc(v) {
		return fmt.Errorf("%q is not a whole number", s)
	}
	if v < 2 || v > aggregate.MaxPopulationSize {
		return fmt.Errorf("%s is out of range: PPA's population is 2 to %d samples", s, aggregate.MaxPopulationSize)
	}
	*p = populationFlag(v)
	return nil
}

// maxArgEcho is the longest argument quoted back in an error message.
const maxArgEcho = 80

// echo quotes an argument for an error message, cut when long.
func echo(s string) string {
	if len(s) > maxArgEcho {
		return strconv.Quote(s[:maxArgEcho]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// negativeLooking returns the first argument before "--" that starts with "-", holds a comma and
// is neither a client nor a flag of fs: a client whose mean is not a plain number (-x1,1), which
// must follow "--".
func negativeLooking(fs *flag.FlagSet, args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && strings.Contains(a, ",") && !clientArg.MatchString(a) && fs.Lookup(name) == nil {
			return echo(a)[1 : len(echo(a))-1]
		}
	}
	return ""
}

func runAggregate(args []string, stdout io.Writer) error {
	fs := newFlagSet("aggregate", "MEAN,VARIANCE MEAN,VARIANCE ...  (clients are numbered from 1; put -- before a client\n"+
		"whose mean is negative and not a plain number)", stdout)
	rule := fs.String("rule", "all", "rule: "+ruleNames()+", or all")
	weightsFlag := fs.String("w", "", "client weights, comma-separated (default equal)")
	normalize := fs.Bool("normalize", false, "normalise weights that do not sum to one")
	prevFlag := fs.String("prev", "", "previous global MEAN,VARIANCE (needed by DWC)")
	policy := fs.String("dwc-policy", "keep-previous", "DWC where the combined precision is not positive: keep-previous, conflation or error")
	n := populationFlag(explore.DefaultPopulationSize)
	fs.Var(&n, "n", fmt.Sprintf("PPA population size, 2 to %d (the explorer's default)", aggregate.MaxPopulationSize))
	seed := fs.Int64("seed", explore.DefaultSeed, "PPA seed (the explorer's, explore.DefaultSeed)")
	asJSON := fs.Bool("json", false, "print a JSON list of {rule, mean, variance, std, error}")
	// Clients may come before, between or after the flags; a client with a negative mean (-1,2) is
	// a client, not a flag.
	if err := parseArgs(fs, args, clientArg.MatchString); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		if bad := negativeLooking(fs, args); bad != "" {
			err = fmt.Errorf("%w (a client whose mean is negative goes after --, as in: fedbayes aggregate -- %s ...)", err, bad)
		}
		return err
	}
	positional := fs.Args()
	if len(positional) == 0 {
		return fmt.Errorf("%w: give at least one client as MEAN,VARIANCE", errUsage)
	}
	clients := make([]aggregate.Gaussian, len(positional))
	for k, a := range positional {
		g, err := parsePair(a)
		if err != nil {
			return fmt.Errorf("%w: client %d: %v", errUsage, k+1, err)
		}
		clients[k] = g
	}
	opt := aggregate.Options{Normalize: *normalize, PopulationSize: int(n), Seed: *seed}
	var err error
	if opt.DWCPolicy, err = parsePolicy(*policy); err != nil {
		return fmt.Errorf("%w: -dwc-policy: %v", errUsage, err)
	}
	if *prevFlag != "" {
		g, err := parsePair(*prevFlag)
		if err != nil {
			return fmt.Errorf("%w: -prev: %v", errUsage, err)
		}
		if err := checkClient(g, false); err != nil {
			return fmt.Errorf("-prev: %v", err)
		}
		opt.Previous = &g
	}
	var weights []float64
	if *weightsFlag != "" {
		for i, s := range strings.Split(*weightsFlag, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil && !math.IsInf(v, 0) {
				return fmt.Errorf("%w: -w: weight %d %s is not a number", errUsage, i+1, echo(s))
			}
			weights = append(weights, v)
		}
	}
	rules := aggregate.Rules()
	if !strings.EqualFold(*rule, "all") {
		r, err := aggregate.ParseRule(*rule)
		if err != nil {
			return fmt.Errorf("%w: -rule: %v", errUsage, err)
		}
		rules = []aggregate.Rule{r}
	}
	// Errors in the input are reported once, before any rule runs, naming the flag or client.
	pointMassOK := len(rules) == 1 && rules[0] == aggregate.FedAvg
	for k, c := range clients {
		if err := checkClient(c, pointMassOK); err != nil {
			hint := ""
			if c.Var == 0 {
				hint = " (only -rule FedAvg takes a point mass)"
			}
			return fmt.Errorf("client %d: %v%s", k+1, err, hint)
		}
	}
	if err := checkWeightsFlag(weights, len(clients), *normalize); err != nil {
		return err
	}
	// DWC weighs the clients against the previous global, which only -prev gives.
	const needsPrev = "DWC needs the previous global: give -prev MEAN,VARIANCE"
	if len(rules) == 1 && rules[0] == aggregate.DWC && opt.Previous == nil {
		return fmt.Errorf("%w: %s", errUsage, needsPrev)
	}
	var rows []aggregateRow
	failed := 0
	for _, r := range rules {
		if r == aggregate.DWC && opt.Previous == nil {
			// Not applicable rather than failed.
			rows = append(rows, aggregateRow{Rule: string(r), Error: needsPrev})
			continue
		}
		g, err := aggregate.Scalar(r, clients, weights, opt)
		if err != nil {
			if len(rules) == 1 {
				return err
			}
			failed++
			rows = append(rows, aggregateRow{Rule: string(r), Error: err.Error()})
			continue
		}
		rows = append(rows, aggregateRow{Rule: string(r), Mean: jsonFloat(g.Mean), Variance: jsonFloat(g.Var), Std: jsonFloat(math.Sqrt(g.Var))})
	}
	if *asJSON {
		if err := writeJSON(stdout, rows); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "rule\tmean\tvariance\tstd\t")
		for _, row := range rows {
			if row.Error != "" {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\n", row.Rule, strings.TrimPrefix(row.Error, "aggregate: "))
				continue
			}
			fmt.Fprintf(tw, "%s\t%.6g\t%.6g\t%.6g\t\n", row.Rule, float64(row.Mean), float64(row.Variance), float64(row.Std))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rules failed (see their rows)", failed, len(rules))
	}
	return nil
}

// checkClient checks one client's mean and variance (variance 0 only where pointMassOK).
func checkClient(g aggregate.Gaussian, pointMassOK bool) error {
	switch {
	case math.IsNaN(g.Mean) || math.IsInf(g.Mean, 0):
		return fmt.Errorf("mean is %v; it must be finite", g.Mean)
	case math.IsNaN(g.Var) || math.IsInf(g.Var, 0):
		return fmt.Errorf("variance is %v; it must be finite", g.Var)
	case g.Var < 0 || (g.Var == 0 && !pointMassOK):
		return fmt.Errorf("variance %v is not positive", g.Var)
	}
	return nil
}

// checkWeightsFlag checks the -w weights, numbering clients from 1 and naming the flags.
func checkWeightsFlag(weights []float64, K int, normalize bool) error {
	if weights == nil {
		return nil
	}
	if len(weights) != K {
		return fmt.Errorf("-w: %d weights for %d clients", len(weights), K)
	}
	for k, w := range weights {
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			return fmt.Errorf("-w: client %d: weight is %v; weights must be finite", k+1, w)
		case w < 0:
			return fmt.Errorf("-w: client %d: weight %v is negative", k+1, w)
		}
	}
	_, err := aggregate.CheckWeights(weights, K, normalize)
	var we *aggregate.WeightSumError
	if errors.As(err, &we) {
		return fmt.Errorf("-w: the weights sum to %v, not 1; add -normalize to divide them by their sum", we.Sum)
	}
	if err != nil {
		return fmt.Errorf("-w: %v", strings.TrimPrefix(err.Error(), "aggregate: "))
	}
	return nil
}

func parsePair(s string) (aggregate.Gaussian, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return aggregate.Gaussian{}, fmt.Errorf("%s is not MEAN,VARIANCE", echo(s))
	}
	m, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	v, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if (err1 != nil && !math.IsInf(m, 0)) || (err2 != nil && !math.IsInf(v, 0)) {
		return aggregate.Gaussian{}, fmt.Errorf("%s is not MEAN,VARIANCE (two numbers)", echo(s))
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
