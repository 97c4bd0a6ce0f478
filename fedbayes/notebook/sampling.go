package notebook

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// Sampler is what one client sampler did over its runs, read from the rows of the rounds the runs
// recorded (the evaluated rounds: a row names the clients of its round, docs/results.md).
type Sampler struct {
	// Name is the value of the label the runs were grouped by (a variant of sampling-digits).
	Name string
	// Returned and Sampled are the clients per recorded round that returned and that were sampled
	// (more than Returned when some dropped out), averaged over rounds and seeds.
	Returned, Sampled float64
	// DataShare is the share of all the clients' examples held by a round's returned clients,
	// averaged over rounds and seeds: about m / K for uniform sampling of m of K clients.
	DataShare float64
	// Distinct is the number of different clients that returned in the recorded rounds of a run,
	// averaged over seeds.
	Distinct float64
	// Accuracy is the final test accuracy, mean ± standard error over the seeds.
	Accuracy stats.Summary
}

// Samplers summarises runs that differ by their client sampling, one Sampler per value of the label
// by, in report.GroupRuns order; sizes[k] is client k's number of examples (partition.Sizes). A run
// without a row naming its clients, or naming a client sizes does not have, is an error.
func Samplers(runs []results.Run, by string, sizes []int) ([]Sampler, error) {
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total <= 0 {
		return nil, fmt.Errorf("notebook: samplers: no client sizes (%v)", sizes)
	}
	groups, err := report.GroupRuns(runs, []string{by})
	if err != nil {
		return nil, err
	}
	out := make([]Sampler, 0, len(groups))
	for _, g := range groups {
		s := Sampler{Name: g.Key[0]}
		rounds := 0
		for _, r := range g.Runs {
			seen := map[int]bool{}
			for _, row := range r.Rows {
				if len(row.Clients) == 0 {
					continue
				}
				held := 0
				for _, k := range row.Clients {
					if k < 0 || k >= len(sizes) {
						return nil, fmt.Errorf("notebook: samplers: %s, round %d: client %d of %d", r.Dir, row.Round, k, len(sizes))
					}
					held += sizes[k]
					seen[k] = true
				}
				sampled := len(row.Sampled)
				if row.Sampled == nil {
					sampled = len(row.Clients)
				}
				s.Returned += float64(len(row.Clients))
				s.Sampled += float64(sampled)
				s.DataShare += float64(held) / float64(total)
				rounds++
			}
			if len(seen) == 0 {
				return nil, fmt.Errorf("notebook: samplers: %s has no row naming its clients", r.Dir)
			}
			s.Distinct += float64(len(seen)) / float64(len(g.Runs))
		}
		s.Returned /= float64(rounds)
		s.Sampled /= float64(rounds)
		s.DataShare /= float64(rounds)
		if s.Accuracy, err = g.Summarize(results.Accuracy); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// SamplerTable is the samplers as a table: clients returned of those sampled, the data they held,
// the distinct clients seen and the final accuracy.
func SamplerTable(ss []Sampler) *TextTable {
	t := NewTextTable("sampler", "returned / sampled per round", "share of the data per round", "distinct clients", "final accuracy")
	for _, s := range ss {
		t.Row(s.Name, fmt.Sprintf("%.1f / %.1f", s.Returned, s.Sampled), fmt.Sprintf("%.0f %%", 100*s.DataShare),
			fmt.Sprintf("%.1f", s.Distinct), PM(s.Accuracy.Mean, s.Accuracy.SE, 3))
	}
	return t
}

// SamplerSummary states in words what the samplers' numbers show: the range of the data a round's
// clients held, which samplers lost clients to dropouts, and the highest and lowest final accuracy
// with their difference in combined standard errors (sqrt(SE_a² + SE_b²)), said to be within
// two of them or beyond.
func SamplerSummary(ss []Sampler) string {
	if len(ss) == 0 {
		return ""
	}
	lo, hi, best, worst := 0, 0, 0, 0
	var dropped []string
	for i, s := range ss {
		if s.DataShare < ss[lo].DataShare {
			lo = i
		}
		if s.DataShare > ss[hi].DataShare {
			hi = i
		}
		if s.Accuracy.Mean > ss[best].Accuracy.Mean {
			best = i
		}
		if s.Accuracy.Mean < ss[worst].Accuracy.Mean {
			worst = i
		}
		if s.Returned < s.Sampled {
			dropped = append(dropped, fmt.Sprintf("%s returned %.1f of %.1f sampled clients a round", s.Name, s.Returned, s.Sampled))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A round's returned clients held from %.0f %% of the data (%s) to %.0f %% (%s).",
		100*ss[lo].DataShare, ss[lo].Name, 100*ss[hi].DataShare, ss[hi].Name)
	if len(dropped) > 0 {
		fmt.Fprintf(&b, " With dropouts, %s.", strings.Join(dropped, "; "))
	}
	if best == worst {
		return b.String()
	}
	a, z := ss[best].Accuracy, ss[worst].Accuracy
	fmt.Fprintf(&b, " Final accuracy was highest with %s (%s) and lowest with %s (%s)", ss[best].Name,
		PM(a.Mean, a.SE, 3), ss[worst].Name, PM(z.Mean, z.SE, 3))
	se := math.Sqrt(a.SE*a.SE + z.SE*z.SE)
	switch {
	case math.IsNaN(se) || se == 0:
		b.WriteString(": one seed each, no standard error to compare the difference with.")
	case a.Mean-z.Mean <= 2*se:
		fmt.Fprintf(&b, ": the difference, %.3f, is %.1f combined standard errors, within two of them: %d seeds do not tell these samplers apart.",
			a.Mean-z.Mean, (a.Mean-z.Mean)/se, min(a.N, z.N))
	default:
		fmt.Fprintf(&b, ": the difference, %.3f, is %.1f combined standard errors, beyond two of them.", a.Mean-z.Mean, (a.Mean-z.Mean)/se)
	}
	return b.String()
}
