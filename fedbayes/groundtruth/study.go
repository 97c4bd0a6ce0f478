package groundtruth

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
)

// Scenario is one setting of a study: a named configuration, run over the study's seeds.
type Scenario struct {
	// Group gathers scenarios shown together: "regimes" for the main table, or a sweep's name.
	Group string `json:"group"`
	// Name labels the scenario in its group; X is its position on a sweep's axis (heterogeneity).
	Name   string  `json:"name"`
	X      float64 `json:"x"`
	Config Config  `json:"config"`
}

// Study is a set of scenarios, each run with every seed.
type Study struct {
	Scenarios []Scenario `json:"scenarios"`
	// Seeds are the problem seeds (Config.Seed); PPA is seeded with the same seed.
	Seeds []uint64 `json:"seeds"`
	// Rules restricts the rules (nil: every rule); PopulationSize is PPA's N.
	Rules          []string `json:"rules,omitempty"`
	PopulationSize int      `json:"population_size,omitempty"`
	// HMC configures the reference of the logistic scenarios (its Seed is replaced by each problem
	// seed); Cache is the folder of the cached references ("" for none).
	HMC   HMCConfig `json:"hmc"`
	Cache string    `json:"-"`
	// Samples is the number of draws per client of the sample-based baselines EP-MCMC and FedPA in
	// the linear scenarios (0: not run).
	Samples int `json:"samples,omitempty"`
	// DrawSets is RuleOptions.DrawSets: EP-MCMC on further independent draw sets per seed.
	DrawSets int `json:"draw_sets,omitempty"`
	// PredictiveSpace runs the BCM, the mixture and beta-PredBayes in the linear scenarios.
	PredictiveSpace bool `json:"predictive_space,omitempty"`
	// Rounds, when positive, also runs every rule over that many federated rounds (RunRounds and
	// RunRoundsLogistic, size weights) under both prior policies in the scenarios of GroupRegimes and
	// GroupLogistic.
	Rounds int `json:"rounds,omitempty"`
}

// The groups of DefaultStudy.
const (
	GroupRegimes = "regimes"
	// GroupLogistic holds the logistic-regression regimes, measured against HMC.
	GroupLogistic = "logistic"
	// GroupSweepPrefix starts the name of a heterogeneity sweep's group, followed by the split.
	GroupSweepPrefix = "sweep:"
)

// DefaultStudy is the study behind docs/ground-truth.md: base is the configuration every scenario
// starts from (its Split and Heterogeneity are replaced); regimes at full heterogeneity and
// heterogeneity sweeps of the covariate shift, the target skew and the number of small clients; and
// on the IID split, sweeps of the feature correlation (0 to 0.9), the dimension (5 to 50) and the
// examples per client (5 to 50).
func DefaultStudy(base Config, seeds int) Study {
	s := Study{HMC: DefaultHMC(), Samples: 1000, DrawSets: DefaultDrawSets, PredictiveSpace: true, Rounds: DefaultRounds}
	for i := 1; i <= seeds; i++ {
		s.Seeds = append(s.Seeds, base.Seed+uint64(i-1))
	}
	add := func(group, name string, x float64, edit func(*Config)) {
		c := base
		edit(&c)
		s.Scenarios = append(s.Scenarios, Scenario{Group: group, Name: name, X: x, Config: c})
	}
	add(GroupRegimes, "IID", 0, func(c *Config) { c.Split, c.Heterogeneity = IID, 0 })
	add(GroupRegimes, "IID, independent features", 0, func(c *Config) { c.Split, c.Heterogeneity, c.Correlation = IID, 0, 0 })
	for _, sp := range []Split{CovariateShift, TargetSkew, UnequalSizes, ManySmall, ConceptShift} {
		add(GroupRegimes, string(sp)+" (h = 1)", 1, func(c *Config) { c.Split, c.Heterogeneity = sp, 1 })
	}
	add(GroupRegimes, fmt.Sprintf("IID, low noise (σ² = %g)", LowNoiseVar), 0, func(c *Config) { c.Split, c.Heterogeneity, c.NoiseVar = IID, 0, LowNoiseVar })
	for _, sp := range []Split{IID, CovariateShift, TargetSkew} {
		name, h := string(sp)+" (h = 1)", 1.0
		if sp == IID {
			name, h = "IID", 0
		}
		add(GroupLogistic, "logistic, "+name, h, func(c *Config) { c.Likelihood, c.Split, c.Heterogeneity = Logistic, sp, h })
	}
	for _, sp := range []Split{CovariateShift, TargetSkew} {
		for _, h := range []float64{0, 0.25, 0.5, 0.75, 1} {
			add(GroupSweepPrefix+string(sp), fmt.Sprintf("h = %g", h), h, func(c *Config) { c.Split, c.Heterogeneity = sp, h })
		}
	}
	for _, h := range []float64{0, 1.0 / 9, 3.0 / 9, 1} {
		m := 1 + int(math.Round(9*h))
		add(GroupSweepPrefix+string(ManySmall), fmt.Sprintf("%d clients", base.Clients*m), float64(base.Clients*m),
			func(c *Config) { c.Split, c.Heterogeneity = ManySmall, h })
	}
	for _, rho := range []float64{0, 0.3, 0.6, 0.9} {
		add(GroupSweepPrefix+SweepCorrelation, fmt.Sprintf("ρ = %g", rho), rho, func(c *Config) { c.Split, c.Heterogeneity, c.Correlation = IID, 0, rho })
	}
	for _, d := range []int{5, 10, 20, 50} {
		add(GroupSweepPrefix+SweepDimension, fmt.Sprintf("d = %d", d), float64(d), func(c *Config) { c.Split, c.Heterogeneity, c.Dims = IID, 0, d })
	}
	for _, n := range []int{5, 10, 20, 50} {
		add(GroupSweepPrefix+SweepPerClient, fmt.Sprintf("%d examples", n), float64(n), func(c *Config) { c.Split, c.Heterogeneity, c.PerClient = IID, 0, n })
	}
	return s
}

// LowNoiseVar is the noise variance of DefaultStudy's low-noise regime (the others' is the base
// configuration's).
const LowNoiseVar = 0.01

// The sweeps of DefaultStudy that move a knob of the problem rather than a split's heterogeneity,
// on the IID split: the feature correlation ρ, the number of weights d and the number of examples
// per client.
const (
	SweepCorrelation = "feature correlation"
	SweepDimension   = "dimension"
	SweepPerClient   = "examples per client"
)

// Row is one posterior's distances to the truth, averaged over a scenario's seeds.
type Row struct {
	Label     string    `json:"label"`
	Rule      string    `json:"rule,omitempty"`
	Weighting Weighting `json:"weighting,omitempty"`
	// Reference marks the best diagonal Gaussians of the exact posterior (the floors).
	Reference bool `json:"reference,omitempty"`
	// Failed counts the seeds where a baseline gave no posterior, with the first reason; the
	// numbers are then the means over the other seeds (all 0 when every seed failed).
	Failed       int    `json:"failed,omitempty"`
	FailedReason string `json:"failed_reason,omitempty"`
	Seeds        int    `json:"seeds"`
	// Means over seeds of Distances' fields (KL +Inf when a seed's is); VarRatio is the geometric
	// mean over seeds of the per-seed geometric means, VarRatioMin and VarRatioMax the extremes over
	// seeds and parameters; NLLExcess is the NLL minus the exact posterior's.
	KLToTruth   Value   `json:"kl_q_p"`
	KLFromTruth Value   `json:"kl_p_q"`
	W2          float64 `json:"w2"`
	MeanErrorSD float64 `json:"mean_error_sd"`
	VarRatio    float64 `json:"var_ratio"`
	VarRatioMin float64 `json:"var_ratio_min"`
	VarRatioMax float64 `json:"var_ratio_max"`
	NLL         float64 `json:"nll"`
	NLLExcess   float64 `json:"nll_excess"`
	Coverage90  float64 `json:"coverage90"`
}

// Summary is one scenario's rows.
type Summary struct {
	Scenario Scenario `json:"scenario"`
	// Clients is the number of clients; ExactNLL and ExactCoverage90 the exact posterior's scores,
	// averaged over seeds.
	Clients         int     `json:"clients"`
	ExactNLL        float64 `json:"exact_nll"`
	ExactCoverage90 float64 `json:"exact_coverage90"`
	// References hold the floors (RefMeanFieldVI, RefMoment); Rows every rule.
	References []Row `json:"references"`
	Rows       []Row `json:"rows"`
	// For a logistic scenario, the HMC references' diagnostics over seeds and weights: the smallest
	// ESS, the largest R-hat, the mean acceptance and the number of draws per reference.
	HMCMinESS  float64 `json:"hmc_min_ess,omitempty"`
	HMCMaxRHat float64 `json:"hmc_max_rhat,omitempty"`
	HMCAccept  float64 `json:"hmc_accept,omitempty"`
	HMCDraws   int     `json:"hmc_draws,omitempty"`
	// PredRows are the predictive-space methods, averaged over seeds (linear scenarios).
	PredRows []PredRow `json:"pred_rows,omitempty"`
	// DrawSets summarises EP-MCMC over the further draw sets of every seed (Result.DrawSets).
	DrawSets *DrawSetSummary `json:"draw_sets,omitempty"`
	// Rounds are the rules over rounds, one per prior policy, averaged over seeds (Study.Rounds).
	Rounds []RoundsSummary `json:"rounds,omitempty"`
	// Sites are the site-based methods run to their fixed points, one per seed (linear regimes, with
	// Study.Rounds).
	Sites []SiteRun `json:"sites,omitempty"`
	// Runs are the scenario's results, one per seed (every number per weight is there).
	Runs []*Result `json:"runs"`
}

// PredRow is a predictive-space method averaged over a scenario's seeds: the means of
// PredictiveScored's fields (VarRatio the geometric mean), NLLExcess the NLL minus the exact
// posterior's.
type PredRow struct {
	Label       string  `json:"label"`
	Beta        float64 `json:"beta"`
	KLToTruth   float64 `json:"kl_q_p"`
	KLFromTruth float64 `json:"kl_p_q"`
	VarRatio    float64 `json:"var_ratio"`
	NLLExcess   float64 `json:"nll_excess"`
	Coverage90  float64 `json:"coverage90"`
}

// StudyResult holds a study and its summaries, in the order of the scenarios.
type StudyResult struct {
	Study     Study     `json:"study"`
	Summaries []Summary `json:"summaries"`
}

// RunStudy runs every scenario with every seed; progress (may be nil) is called after each scenario.
func RunStudy(s Study, progress func(done, total int)) (*StudyResult, error) {
	if len(s.Seeds) == 0 {
		return nil, fmt.Errorf("groundtruth: study without seeds")
	}
	if len(s.Scenarios) == 0 {
		return nil, fmt.Errorf("groundtruth: study without scenarios")
	}
	opt := RuleOptions{PopulationSize: s.PopulationSize, Samples: s.Samples, DrawSets: s.DrawSets, PredictiveSpace: s.PredictiveSpace}
	for _, name := range s.Rules {
		r, err := parseRule(name)
		if err != nil {
			return nil, err
		}
		opt.Rules = append(opt.Rules, r)
	}
	out := &StudyResult{Study: s}
	for i, sc := range s.Scenarios {
		var runs []*Result
		for _, seed := range s.Seeds {
			c, hc := s.seeded(sc, seed)
			o := opt
			o.Seed = int64(seed)
			r, err := runSeeded(c, o, hc, s.Cache)
			if err != nil {
				return nil, fmt.Errorf("groundtruth: scenario %s / %s, seed %d: %w", sc.Group, sc.Name, seed, err)
			}
			runs = append(runs, r)
		}
		sum, err := Summarise(sc, runs)
		if err != nil {
			return nil, err
		}
		if s.Rounds > 0 && (sc.Group == GroupRegimes || sc.Group == GroupLogistic) {
			if sum.Rounds, err = studyRounds(s, sc, opt); err != nil {
				return nil, err
			}
		}
		if s.Rounds > 0 && sc.Group == GroupRegimes {
			if sum.Sites, err = studySites(s, sc); err != nil {
				return nil, err
			}
		}
		out.Summaries = append(out.Summaries, sum)
		if progress != nil {
			progress(i+1, len(s.Scenarios))
		}
	}
	return out, nil
}

// seeded returns sc's configuration and the study's HMC configuration, both with the given seed.
func (s Study) seeded(sc Scenario, seed uint64) (Config, HMCConfig) {
	c, hc := sc.Config, s.HMC
	c.Seed, hc.Seed = seed, seed
	return c, hc
}

// runSeeded runs one seed's problem c: Run for a linear one, RunLogistic against HMC (hc, cached in
// cache) for a logistic one.
func runSeeded(c Config, o RuleOptions, hc HMCConfig, cache string) (*Result, error) {
	if c.Likelihood != Logistic {
		return Run(c, o)
	}
	p, err := Simulate(c)
	if err != nil {
		return nil, err
	}
	return RunLogistic(p, o, hc, cache)
}

// Summarise averages the runs of one scenario (same rules in the same order) over their seeds.
func Summarise(sc Scenario, runs []*Result) (Summary, error) {
	if len(runs) == 0 {
		return Summary{}, fmt.Errorf("groundtruth: no runs to summarise")
	}
	sum := Summary{Scenario: sc, Clients: len(runs[0].Sizes), Runs: runs}
	n := float64(len(runs))
	for _, r := range runs {
		sum.ExactNLL += r.ExactPredictive.NLL / n
		sum.ExactCoverage90 += r.ExactPredictive.Coverage90 / n
		if h := r.Reference; h != nil {
			if sum.HMCDraws == 0 {
				sum.HMCMinESS = math.Inf(1)
			}
			sum.HMCDraws = h.Config.Chains * h.Config.Samples
			sum.HMCAccept += h.Accept / n
			for i := range h.ESS {
				sum.HMCMinESS = math.Min(sum.HMCMinESS, h.ESS[i])
				sum.HMCMaxRHat = math.Max(sum.HMCMaxRHat, h.RHat[i])
			}
		}
	}
	collect := func(pick func(r *Result) []Scored, ref bool) ([]Row, error) {
		first := pick(runs[0])
		rows := make([]Row, len(first))
		for i, s := range first {
			row := Row{Label: s.Label, Rule: s.Rule, Weighting: s.Weighting, Reference: ref,
				VarRatioMin: math.Inf(1), Seeds: len(runs)}
			ok := 0.0
			for _, r := range runs {
				list := pick(r)
				if len(list) != len(first) || list[i].Label != s.Label {
					return nil, fmt.Errorf("groundtruth: runs of %s have different rules", sc.Name)
				}
				if list[i].Failed != "" {
					if row.Failed == 0 {
						row.FailedReason = list[i].Failed
					}
					row.Failed++
				} else {
					ok++
				}
			}
			if ok == 0 {
				rows[i] = Row{Label: s.Label, Rule: s.Rule, Weighting: s.Weighting, Failed: row.Failed,
					FailedReason: row.FailedReason, Seeds: len(runs)}
				continue
			}
			n := ok
			logRatio := 0.0
			for _, r := range runs {
				list := pick(r)
				if list[i].Failed != "" {
					continue
				}
				d := list[i].Distances
				row.KLToTruth += d.KLToTruth / Value(n)
				row.KLFromTruth += d.KLFromTruth / Value(n)
				row.W2 += d.W2 / n
				row.MeanErrorSD += d.MeanErrorSD / n
				logRatio += math.Log(d.VarRatio) / n
				row.VarRatioMin = math.Min(row.VarRatioMin, d.VarRatioMin)
				row.VarRatioMax = math.Max(row.VarRatioMax, d.VarRatioMax)
				row.NLL += d.Predictive.NLL / n
				row.NLLExcess += (d.Predictive.NLL - r.ExactPredictive.NLL) / n
				row.Coverage90 += d.Predictive.Coverage90 / n
			}
			row.VarRatio = math.Exp(logRatio)
			rows[i] = row
		}
		return rows, nil
	}
	for i, first := range runs[0].PredictiveRules {
		row := PredRow{Label: first.Label}
		logRatio := 0.0
		for _, r := range runs {
			if len(r.PredictiveRules) != len(runs[0].PredictiveRules) || r.PredictiveRules[i].Label != first.Label {
				return Summary{}, fmt.Errorf("groundtruth: runs of %s have different predictive-space methods", sc.Name)
			}
			q := r.PredictiveRules[i]
			row.Beta += q.Beta / n
			row.KLToTruth += q.KLToTruth / n
			row.KLFromTruth += q.KLFromTruth / n
			logRatio += math.Log(q.VarRatio) / n
			row.NLLExcess += (q.Predictive.NLL - r.ExactPredictive.NLL) / n
			row.Coverage90 += q.Predictive.Coverage90 / n
		}
		row.VarRatio = math.Exp(logRatio)
		sum.PredRows = append(sum.PredRows, row)
	}
	sum.DrawSets = summariseDrawSets(runs)
	var err error
	if sum.References, err = collect(func(r *Result) []Scored { return r.References }, true); err != nil {
		return Summary{}, err
	}
	if sum.Rows, err = collect(func(r *Result) []Scored { return r.Rules }, false); err != nil {
		return Summary{}, err
	}
	return sum, nil
}

// studySites runs the site-based methods to their fixed points on one scenario, one run per seed.
func studySites(s Study, sc Scenario) ([]SiteRun, error) {
	var out []SiteRun
	for _, seed := range s.Seeds {
		c, _ := s.seeded(sc, seed)
		p, err := Simulate(c)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: scenario %s, seed %d: %w", sc.Name, seed, err)
		}
		r, err := SiteConvergence(p)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: scenario %s, seed %d, sites: %w", sc.Name, seed, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// studyRounds runs one scenario over s.Rounds rounds with every seed, under both prior policies.
func studyRounds(s Study, sc Scenario, opt RuleOptions) ([]RoundsSummary, error) {
	var out []RoundsSummary
	for _, pol := range PriorPolicies() {
		var runs []*RoundsResult
		for _, seed := range s.Seeds {
			c, hc := s.seeded(sc, seed)
			p, err := Simulate(c)
			if err != nil {
				return nil, fmt.Errorf("groundtruth: scenario %s, seed %d: %w", sc.Name, seed, err)
			}
			ro := RoundsOptions{Rounds: s.Rounds, Prior: pol, Rules: opt.Rules, PopulationSize: opt.PopulationSize, Seed: int64(seed),
				Sites: c.Likelihood != Logistic}
			var r *RoundsResult
			if c.Likelihood == Logistic {
				r, err = RunRoundsLogistic(p, ro, hc, s.Cache)
			} else {
				r, err = RunRounds(p, ro)
			}
			if err != nil {
				return nil, fmt.Errorf("groundtruth: scenario %s, seed %d, rounds: %w", sc.Name, seed, err)
			}
			runs = append(runs, r)
		}
		sum, err := SummariseRounds(runs)
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, nil
}

// DrawSetSummary is EP-MCMC over the further draw sets of a scenario's seeds. Each set's excess is
// over its own seed's floors (Summary.Excess on one set); the sets of one seed share a problem, so
// its Monte Carlo error is the spread within a seed (WithinSD: the root mean of the seeds' variances
// over their sets), not the spread over all the sets, which mixes the seeds' problems. BelowDWC
// counts the sets below DWC's excess in the same seed, SeedsBelowDWC the seeds whose mean over their
// sets is, SeedsSplit the seeds with sets on both sides of it; for the full-covariance form, the larger of its two KL divergences to the truth, which the
// diagonal floors do not bound.
type DrawSetSummary struct {
	Sets          int     `json:"sets"`
	Seeds         int     `json:"seeds"`
	Failed        int     `json:"failed"`
	Excess        float64 `json:"excess"`
	WithinSD      float64 `json:"within_sd"`
	BelowDWC      int     `json:"below_dwc"`
	SeedsBelowDWC int     `json:"seeds_below_dwc"`
	SeedsSplit    int     `json:"seeds_split"`
	FullFailed    int     `json:"full_failed"`
	FullKL        float64 `json:"full_kl"`
	FullWithinSD  float64 `json:"full_within_sd"`
	FullAbove     int     `json:"full_above_recover"`
}

// summariseDrawSets returns the DrawSetSummary of runs, or nil when no run has draw sets.
func summariseDrawSets(runs []*Result) *DrawSetSummary {
	out := &DrawSetSummary{}
	var all, allFull []float64
	var within, withinFull []float64 // each seed's variance over its sets
	for _, r := range runs {
		if len(r.DrawSets) == 0 {
			continue
		}
		out.Seeds++
		var vi, mom, dwc float64 = 0, 0, math.Inf(1)
		for _, ref := range r.References {
			switch ref.Label {
			case RefMeanFieldVI:
				vi = float64(ref.Distances.KLToTruth)
			case RefMoment:
				mom = float64(ref.Distances.KLFromTruth)
			}
		}
		for _, rule := range r.Rules {
			if rule.Label == string(aggregate.DWC) && rule.Failed == "" {
				dwc = ExcessOver(float64(rule.Distances.KLToTruth), float64(rule.Distances.KLFromTruth), vi, mom)
			}
		}
		var diag, full []float64
		below := 0
		for _, set := range r.DrawSets {
			out.Sets++
			if set.Failed != "" {
				out.Failed++
			} else {
				e := ExcessOver(float64(set.KLToTruth), float64(set.KLFromTruth), vi, mom)
				diag = append(diag, e)
				if e < dwc {
					out.BelowDWC++
					below++
				}
			}
			if set.FullFailed != "" {
				out.FullFailed++
			} else {
				kl := math.Max(float64(set.FullKLToTruth), float64(set.FullKLFromTruth))
				full = append(full, kl)
				if kl > RecoverNats {
					out.FullAbove++
				}
			}
		}
		m, sd := meanSD(diag)
		if len(diag) > 0 && m < dwc {
			out.SeedsBelowDWC++
		}
		if below > 0 && below < len(diag) {
			out.SeedsSplit++
		}
		if len(diag) > 1 {
			within = append(within, sd*sd)
		}
		if _, sdf := meanSD(full); len(full) > 1 {
			withinFull = append(withinFull, sdf*sdf)
		}
		all, allFull = append(all, diag...), append(allFull, full...)
	}
	if out.Sets == 0 {
		return nil
	}
	out.Excess, _ = meanSD(all)
	out.FullKL, _ = meanSD(allFull)
	rootMean := func(v []float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		var t float64
		for _, x := range v {
			t += x / float64(len(v))
		}
		return math.Sqrt(t)
	}
	out.WithinSD, out.FullWithinSD = rootMean(within), rootMean(withinFull)
	return out
}

// meanSD returns the mean and the sample standard deviation of x (NaN where undefined).
func meanSD(x []float64) (float64, float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	var m float64
	for _, v := range x {
		m += v / float64(len(x))
	}
	if len(x) < 2 {
		return m, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}
