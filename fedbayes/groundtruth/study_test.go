package groundtruth

import (
	"math"
	"strings"
	"testing"
)

// TestGroundTruthVerdicts checks the verdict and confidence rules on hand-made rows.
func TestGroundTruthVerdicts(t *testing.T) {
	s := Summary{References: []Row{
		{Label: RefMeanFieldVI, Reference: true, KLToTruth: 1, KLFromTruth: 2},
		{Label: RefMoment, Reference: true, KLToTruth: 3, KLFromTruth: 0.5},
	}}
	for _, tc := range []struct {
		klQP, klPQ, ratio float64
		excess            float64
		verdict, conf     string
	}{
		{1.05, 0.55, 1, 0.05, "recovers", ""},
		{1.05, 1.4, 0.79, 0.9, "near", "over-confident"},
		{3, 0.5, 1.3, 2, "far", "under-confident"},
		{math.Inf(1), math.Inf(1), 0, math.Inf(1), "point mass", "over-confident"},
	} {
		r := Row{Label: "r", KLToTruth: Value(tc.klQP), KLFromTruth: Value(tc.klPQ), VarRatio: tc.ratio}
		if e := s.Excess(r); !(near(e, tc.excess, 1e-12) || (math.IsInf(e, 1) && math.IsInf(tc.excess, 1))) {
			t.Errorf("%+v: excess %v, want %v", tc, e, tc.excess)
		}
		if v := s.Verdict(r); v != tc.verdict {
			t.Errorf("%+v: verdict %q, want %q", tc, v, tc.verdict)
		}
		if c := Confidence(r); c != tc.conf {
			t.Errorf("%+v: confidence %q, want %q", tc, c, tc.conf)
		}
	}
	failed := Row{Label: "EP-MCMC", Failed: 2, Seeds: 2, FailedReason: "precision not positive"}
	if v := s.Verdict(failed); v != "failed" {
		t.Errorf("a baseline that failed in every seed: verdict %q", v)
	}
	var b strings.Builder
	tableRow(&b, s, failed)
	if !strings.Contains(b.String(), "failed in all 2 seeds: precision not positive") {
		t.Errorf("table row of a failed baseline: %s", b.String())
	}
	if got := usable([]Row{failed, {Label: "x", Seeds: 2}}); len(got) != 1 || got[0].Label != "x" {
		t.Errorf("usable rows: %+v", got)
	}

	// With a frontier 0.3 nat above the floors, "recovers" and "near" are judged from it: an excess
	// of 0.35 recovers, 1.25 is near, 1.35 is far.
	s.References = append(s.References, Row{Label: RefFrontier, Reference: true, KLToTruth: 1.3, KLFromTruth: 0.8})
	if f := s.FrontierExcess(); !near(f, 0.3, 1e-12) {
		t.Fatalf("frontier excess %v, want 0.3", f)
	}
	for _, tc := range []struct {
		klQP    float64
		verdict string
	}{{1.35, "recovers"}, {2.25, "near"}, {2.35, "far"}} {
		r := Row{Label: "r", KLToTruth: Value(tc.klQP), KLFromTruth: 0.5, VarRatio: 1}
		if v := s.Verdict(r); v != tc.verdict {
			t.Errorf("excess %v over a frontier of 0.3: verdict %q, want %q", s.Excess(r), v, tc.verdict)
		}
	}
	// A full-covariance row is judged by its own KL divergences, which may lie below the diagonal
	// floors (a negative excess): 0.08 nat recovers, 0.5 is near, 1.5 far.
	for _, tc := range []struct {
		kl      float64
		verdict string
	}{{0.08, "recovers"}, {0.5, "near"}, {1.5, "far"}} {
		r := Row{Label: LabelEPMCMCFull, KLToTruth: Value(tc.kl), KLFromTruth: Value(tc.kl / 2), VarRatio: 1}
		if v := s.Verdict(r); v != tc.verdict {
			t.Errorf("full covariance at KL %v: verdict %q, want %q", tc.kl, v, tc.verdict)
		}
	}
}

// TestGroundTruthCovariateShiftAtZero checks that covariate shift at h = 0 draws the IID problem.
func TestGroundTruthCovariateShiftAtZero(t *testing.T) {
	a := DefaultConfig()
	b := a
	b.Split = CovariateShift
	pa, err := Simulate(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Simulate(b)
	if err != nil {
		t.Fatal(err)
	}
	for k := range pa.Clients {
		for i, y := range pa.Clients[k].Y {
			if pb.Clients[k].Y[i] != y {
				t.Fatalf("client %d example %d: %v vs %v", k, i, y, pb.Clients[k].Y[i])
			}
		}
	}
}

// TestGroundTruthStudy runs a small study and checks the page's computed parts.
func TestGroundTruthStudy(t *testing.T) {
	base := DefaultConfig()
	base.Clients, base.Dims, base.PerClient, base.Test = 3, 2, 10, 50
	st := DefaultStudy(base, 2)
	st.HMC.Warmup, st.HMC.Samples = 200, 200
	st.Cache = t.TempDir()
	if _, err := RunStudy(Study{Seeds: st.Seeds}, nil); err == nil {
		t.Error("a study without scenarios: no error")
	}
	if _, err := RunStudy(Study{Scenarios: st.Scenarios, Seeds: st.Seeds, Rules: []string{"nope"}}, nil); err == nil {
		t.Error("an unknown rule: no error")
	}
	calls := 0
	res, err := RunStudy(st, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != len(st.Scenarios) || len(res.Summaries) != len(st.Scenarios) {
		t.Fatalf("%d progress calls, %d summaries, for %d scenarios", calls, len(res.Summaries), len(st.Scenarios))
	}
	page := Markdown(res, "fedbayes ground-truth -test")
	for _, want := range []string{"## Findings", "### IID", "### Equal against size weights", "### covariate-shift",
		"### many-small", "by regime count (of 8)", "### concept-shift (h = 1)", "Here p is the posterior of a misspecified model", "### feature correlation", "### dimension", "### examples per client", "Rounds to the frontier (fixed prior)", "The seeds decide the lead", "## Logistic regression", "### logistic, IID", "by regime count (of 3)", "`fedbayes ground-truth -test`", "Beside the papers",
		"## Over rounds", "### Fixed prior", "### Updated prior", "KL(p ‖ q) by round (IID, updated prior)",
		"### Over rounds (logistic)", "#### Updated prior", "KL(p ‖ q) by round (logistic, IID, updated prior)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "NaN") {
		t.Error("page contains NaN")
	}
}
