package notebook

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/internal/pinned"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/plots"
)

func TestRotate90(t *testing.T) {
	for _, tc := range []struct {
		name  string
		x     []float32
		shape []int
		want  []float32
	}{
		// 1 2      3 1
		// 3 4  ->  4 2
		{"2x2 grey", []float32{1, 2, 3, 4}, []int{2, 2, 1}, []float32{3, 1, 4, 2}},
		{"two images", []float32{1, 2, 3, 4, 5, 6, 7, 8}, []int{2, 2, 1}, []float32{3, 1, 4, 2, 7, 5, 8, 6}},
		{"channels move together", []float32{1, 10, 2, 20, 3, 30, 4, 40}, []int{2, 2, 2}, []float32{3, 30, 1, 10, 4, 40, 2, 20}},
	} {
		if got := Rotate90(tc.x, tc.shape); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	y := x
	for range 4 {
		y = Rotate90(y, []int{3, 3, 1})
	}
	if !slices.Equal(x, y) {
		t.Errorf("four quarter turns: %v", y)
	}
}

func TestResize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		x        []float32
		from, to []int
		want     []float32
	}{
		{"same size", []float32{1, 2, 3, 4}, []int{2, 2}, []int{2, 2}, []float32{1, 2, 3, 4}},
		// The one output pixel's centre sits midway between the four input pixels.
		{"2x2 to 1x1", []float32{1, 2, 3, 4}, []int{2, 2}, []int{1, 1}, []float32{2.5}},
		{"1x1 to 2x2", []float32{7}, []int{1, 1}, []int{2, 2}, []float32{7, 7, 7, 7}},
		// 1x2 to 1x4: centres at -0.25 (clamped to 0), 0.25, 0.75 and 1.25 (clamped to 1).
		{"1x2 to 1x4", []float32{0, 1}, []int{1, 2}, []int{1, 4}, []float32{0, 0.25, 0.75, 1}},
	} {
		if got := Resize(tc.x, tc.from, tc.to); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSampleData(t *testing.T) {
	d := &data.Dataset{X: []float32{0, 1, 2, 3, 4, 5}, Shape: []int{1}, Labels: []int32{0, 1, 0, 1, 0, 1}, NumClasses: 2}
	if SampleData(d, 0, 1) != d || SampleData(d, 6, 1) != d {
		t.Error("n = 0 or n >= Len must return the dataset itself")
	}
	a, b := SampleData(d, 3, 7), SampleData(d, 3, 7)
	if a.Len() != 3 || !slices.Equal(a.X, b.X) {
		t.Errorf("SampleData(3) = %v and %v: want 3 examples, the same for the same seed", a.X, b.X)
	}
	seen := map[float32]bool{}
	for i, v := range a.X {
		if seen[v] || a.Labels[i] != int32(v)%2 {
			t.Errorf("example %d = %v (label %d): repeated, or its label lost", i, v, a.Labels[i])
		}
		seen[v] = true
	}
}

// result evaluates hand-made predictions: probs is [M][N][C] flattened.
func result(t *testing.T, probs []float32, labels []int32, classes, samples int) metrics.UncertaintyResult {
	t.Helper()
	r, err := metrics.EvaluateUncertainty(probs, labels, classes, samples, metrics.DefaultBins)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPooledReliabilityCommonest(t *testing.T) {
	// Seed 1: confidences 0.9 (right) and 0.6 (wrong); seed 2: 0.9 (right) twice.
	r1 := result(t, []float32{0.9, 0.1, 0.4, 0.6}, []int32{0, 0}, 2, 1)
	r2 := result(t, []float32{0.9, 0.1, 0.1, 0.9}, []int32{0, 1}, 2, 1)
	bins, ece := PooledReliability([]metrics.UncertaintyResult{r1, r2})
	var got []plots.ReliabilityBin
	for _, b := range bins {
		if b.Count > 0 {
			got = append(got, b)
		}
	}
	if len(got) != 2 || got[0].Count != 1 || math.Abs(got[0].Confidence-0.6) > 1e-6 || got[0].Accuracy != 0 ||
		got[1].Count != 3 || math.Abs(got[1].Confidence-0.9) > 1e-6 || got[1].Accuracy != 1 {
		t.Fatalf("pooled bins: %+v", got)
	}
	// ECE = 1/4 |0 - 0.6| + 3/4 |1 - 0.9|.
	if want := 0.25*0.6 + 0.75*0.1; math.Abs(ece-want) > 1e-6 {
		t.Errorf("pooled ECE = %g, want %g", ece, want)
	}
	if got := MeanConfidence(r1); math.Abs(got-75) > 1e-4 {
		t.Errorf("MeanConfidence = %g, want 75", got)
	}
	// Predictions: 0, 1 (seed 1), 0, 1 (seed 2), then 0 again: class "a" 3 of 5.
	r3 := result(t, []float32{0.8, 0.2}, []int32{0}, 2, 1)
	if got := Commonest([]metrics.UncertaintyResult{r1, r2, r3}, []string{"a", "b"}); got != "a (60%)" {
		t.Errorf("Commonest = %q", got)
	}
}

// testStudy is a study of two nets (deterministic, variational), two seeds and two input sets
// (test, noise), on hand-made predictions of 2 classes.
func testStudy(t *testing.T) *Study {
	det := func(p float32) metrics.UncertaintyResult { // one sample, 2 inputs of label 0
		return result(t, []float32{p, 1 - p, 1 - p, p}, []int32{0, 0}, 2, 1)
	}
	vi := func(p, q float32) metrics.UncertaintyResult { // two samples that disagree
		return result(t, []float32{p, 1 - p, 0.5, 0.5, q, 1 - q, 0.5, 0.5}, []int32{0, 0}, 2, 2)
	}
	return &Study{Mode: "quick", Spec: StudySpec{Seeds: 2, Epochs: 2}, Sets: []string{"test", "noise"},
		Labelled: []bool{true, false}, Classes: []string{"a", "b"},
		Runs: []NetRun{
			{Net: "deterministic", Kind: models.Deterministic, TrainNLL: [][]float64{{1, 0.5}, {1.2, 0.6}},
				Results: [][]metrics.UncertaintyResult{{det(0.9), det(0.8)}, {det(0.6), det(0.5)}}},
			{Net: "variational", Kind: models.Bayesian, TrainNLL: [][]float64{{1, 0.7}, {1.1, 0.8}},
				Results: [][]metrics.UncertaintyResult{{vi(0.9, 0.7), vi(0.8, 0.6)}, {vi(0.6, 0.1), vi(0.5, 0.2)}}},
		}}
}

func TestStudyTablesAndCharts(t *testing.T) {
	s := testStudy(t)
	var out bytes.Buffer
	tab, verdicts, rel, err := s.Calibration()
	if err != nil || tab.Write(&out) != nil || len(verdicts) != 2 || len(rel.Series) != 2 || rel.Series[1].Name != "variational" {
		t.Fatalf("Calibration: %v, %q, %+v", err, verdicts, rel)
	}
	// Deterministic, seed 1: inputs right at 0.9 and wrong at 0.9 (it predicts b with 0.9): accuracy 50%.
	if !strings.Contains(out.String(), "50.00 ± 0.00") || !strings.HasPrefix(verdicts[0], "deterministic: overconfident") {
		t.Errorf("calibration table:\n%s%q", out.String(), verdicts)
	}
	if _, err := plots.ReliabilityDiagram("r", rel); err != nil {
		t.Errorf("reliability: %v", err)
	}
	tab, dec, err := s.Decomposition()
	if err != nil || len(dec.Nets) != 2 || dec.Nets[0].Epistemic[0] != 0 || !(dec.Nets[1].Epistemic[1] > 0) {
		t.Fatalf("Decomposition: %v, %+v", err, dec)
	}
	out.Reset()
	if tab.Write(&out); strings.Count(out.String(), "\n") != 1+2*2 || !strings.Contains(out.String(), "—") {
		t.Errorf("decomposition table (a row per set and net, no accuracy for unlabelled noise):\n%s", out.String())
	}
	if _, err := plots.DecompositionBars("d", dec); err != nil {
		t.Errorf("decomposition chart: %v", err)
	}
	sc := s.Scatter(1, 1)
	if len(sc.Groups) != 2 || len(sc.Groups[0].Points) != 1 || sc.Groups[0].Color != setColors[0] {
		t.Errorf("Scatter: %+v", sc)
	}
	fractions := []float64{0.5, 1}
	for _, tc := range []struct {
		measure metrics.Measure
		nets    int
	}{{metrics.MeasureEntropy, 2}, {metrics.MeasureEpistemic, 1}, {metrics.MeasureMutualInformation, 1}} {
		c, err := s.RetentionCurves(tc.measure, fractions)
		if err != nil || len(c.Series) != tc.nets || len(c.Series[0].Runs) != 2 {
			t.Errorf("RetentionCurves(%s): %d lines, %v; want %d", tc.measure, len(c.Series), err, tc.nets)
		}
	}
	if _, err := s.RetentionTable(fractions, []int{1, 2}); err == nil {
		t.Error("RetentionTable: an index beyond the fractions was accepted")
	}
	rt, err := s.RetentionTable(fractions, []int{1, 0})
	out.Reset()
	if err != nil || rt.Write(&out) != nil || !strings.Contains(out.String(), "100% kept       50% kept") ||
		!strings.Contains(out.String(), "normalised entropy  deterministic   50.00 ± 0.00  100.00 ± 0.00") {
		t.Errorf("RetentionTable: %v\n%s", err, out.String())
	}
	ood, best, err := s.OOD()
	if err != nil || len(best) != 1 || !strings.HasPrefix(best[0], "best at telling noise from test inputs: ") {
		t.Fatalf("OOD: %v, %q", err, best)
	}
	// The deterministic net's entropy, seed 1: noise inputs (0.6, 0.4) are more uncertain than test
	// inputs (0.9, 0.1), so AUROC 1 on both seeds.
	out.Reset()
	ood.Write(&out)
	found := false
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		found = found || len(f) == 6 && f[0] == "deterministic" && f[1] == "normalised" && strings.Join(f[3:], " ") == "1.000 ± 0.000"
	}
	if !found {
		t.Errorf("OOD table, want AUROC 1.000 ± 0.000 for the deterministic net's entropy:\n%s", out.String())
	}
	curves := s.TrainingCurves()
	if len(curves.Series) != 2 || !slices.Equal(curves.Series[0].X, []float64{1, 2}) {
		t.Errorf("TrainingCurves: %+v", curves)
	}
}

func TestStudySaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "study.gob")
	var inc *Incomplete
	if _, err := LoadStudy(path); !errors.As(err, &inc) {
		t.Errorf("LoadStudy before the training cell: %v", err)
	}
	s := testStudy(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadStudy(path)
	if err != nil || got.Mode != "quick" || len(got.Runs) != 2 || got.Runs[1].Kind != models.Bayesian ||
		got.Runs[1].Results[1][0].MeanEpistemic != s.Runs[1].Results[1][0].MeanEpistemic {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("not a gob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadStudy(path); err == nil || !strings.Contains(err.Error(), "run the training cell again") {
		t.Errorf("a damaged study: %v", err)
	}
}

// TrainStudy trains the three nets on a few digits and evaluates them on the four input sets.
func TestTrainStudy(t *testing.T) {
	for _, name := range []string{"digits", "fashion-mnist"} {
		if _, _, err := data.Load(name, data.Dir()); err != nil {
			t.Skipf("%s not installed: %v", name, err)
		}
	}
	spec := StudySpec{Dataset: "digits", Arch: models.ArchMLP, Seeds: 2, TrainSize: 64, TestSize: 40, OODSize: 20,
		Epochs: 2, Batch: 16, LR: 0.01, Samples: 3, InitLogVar: models.DefaultInitLogVar, Seed: 1}
	s, err := TrainStudy(spec, "quick")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != len(Nets) || len(s.Sets) != 4 || s.Sets[2] != "foreign: fashion-mnist" || len(s.Classes) != 10 {
		t.Fatalf("study: %d runs, sets %v, classes %v", len(s.Runs), s.Sets, s.Classes)
	}
	for _, r := range s.Runs {
		if len(r.TrainNLL) != 2 || len(r.TrainNLL[0]) != 2 || len(r.Results) != 4 || len(r.Results[0]) != 2 ||
			len(r.Results[0][0].Inputs) != 40 || len(r.Results[1][0].Inputs) != 20 {
			t.Errorf("%s: NLL %v, results %d", r.Net, r.TrainNLL, len(r.Results))
		}
		if r.Kind == models.Deterministic && r.Results[3][0].MeanEpistemic != 0 {
			t.Errorf("deterministic net: epistemic %g, want 0", r.Results[3][0].MeanEpistemic)
		}
	}
	bad := spec
	bad.Dataset = "iris"
	if _, err := TrainStudy(bad, "quick"); err == nil {
		t.Error("a dataset other than digits or fashion-mnist was accepted")
	}
	bad = spec
	bad.Batch = 1000
	if _, err := TrainStudy(bad, "quick"); err == nil || !strings.Contains(err.Error(), "batch 1000") {
		t.Errorf("a batch larger than the data: %v", err)
	}
}

// TestTrainStudyPinned pins the numbers of a small study, on each kernel path (pinned.Pins): the
// training NLL of every net, seed and epoch, then one test NLL (Results[0][1]: the test set, seed 1) and
// one epistemic mean (Results[3][0]: the last input set, seed 0), as TrainNet's own batch loop gave them
// before it moved onto models.Loop (the move did not change them, bit for bit). The three kernel paths
// differ by up to 2.6e-6 relative (float32 sums over batches of 16), so a core without a pin is
// compared to 1e-5.
func TestTrainStudyPinned(t *testing.T) {
	for _, name := range []string{"digits", "fashion-mnist"} {
		if _, _, err := data.Load(name, data.Dir()); err != nil {
			t.Skipf("%s not installed: %v", name, err)
		}
	}
	spec := StudySpec{Dataset: "digits", Arch: models.ArchMLP, Seeds: 2, TrainSize: 64, TestSize: 40, OODSize: 20,
		Epochs: 2, Batch: 16, LR: 0.01, Samples: 3, InitLogVar: models.DefaultInitLogVar, Seed: 1}
	s, err := TrainStudy(spec, "quick")
	if err != nil {
		t.Fatal(err)
	}
	// Each pin is "NLL(seed 0, epoch 1) NLL(0, 2) NLL(1, 1) NLL(1, 2) test-NLL epistemic".
	want := []struct {
		net  string
		pins pinned.Pins
	}{
		{"deterministic", pinned.Pins{
			AVX512:  "2.1307879090309143 1.357520192861557 2.2288305163383484 1.459407776594162 1.7315581622831524 0",
			Haswell: "2.1307879388332367 1.357520192861557 2.2288305163383484 1.459407776594162 1.7315581656302075 0",
			Plain:   "2.1307879388332367 1.3575202226638794 2.228830575942993 1.4594077467918396 1.7315581966574605 0",
			Tol:     1e-5}},
		{"MC dropout", pinned.Pins{
			AVX512:  "2.186053901910782 1.460161417722702 2.3457842469215393 1.5381891131401062 1.8520332009873754 0.028321104553137123",
			Haswell: "2.1860538721084595 1.4601614475250244 2.345784366130829 1.5381891429424286 1.8520331932251626 0.02832110497893927",
			Plain:   "2.1860539317131042 1.460161417722702 2.3457844257354736 1.5381891429424286 1.852033195194234 0.02832110620872097",
			Tol:     1e-5}},
		{"variational", pinned.Pins{
			AVX512:  "2.1544419825077057 1.5959207713603973 2.305210530757904 1.5243911743164062 1.8201000786209693 0.018442094628046947",
			Haswell: "2.1544406414031982 1.5959189534187317 2.305210530757904 1.5243911445140839 1.8201000689112228 0.018442170524319516",
			Plain:   "2.1544391214847565 1.5959166288375854 2.305210590362549 1.5243912637233734 1.8201000746349365 0.018442263262235026",
			Tol:     1e-5}},
	}
	if len(s.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(s.Runs), len(want))
	}
	for i, w := range want {
		r := s.Runs[i]
		if r.Net != w.net || len(r.TrainNLL) != 2 || len(r.TrainNLL[0]) != 2 || len(r.TrainNLL[1]) != 2 {
			t.Fatalf("run %d: %s with training NLL %v, want %s over 2 seeds and 2 epochs", i, r.Net, r.TrainNLL, w.net)
		}
		var fields []string
		for _, seed := range r.TrainNLL {
			for _, v := range seed {
				fields = append(fields, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		fields = append(fields, strconv.FormatFloat(r.Results[0][1].Classification.NLL, 'g', -1, 64),
			strconv.FormatFloat(r.Results[3][0].MeanEpistemic, 'g', -1, 64))
		pinned.Check(t, r.Net, strings.Join(fields, " "), w.pins)
	}
}

func TestGalleryHTML(t *testing.T) {
	sets := []InputSet{
		{Name: "test", X: []float32{0, 1, 1, 0, 0.5, 0.5, 0.5, 0.5}, Labels: []int32{1, 2}},
		{Name: "<noise>", X: []float32{2, -1, 0, 0}, Labels: []int32{0}},
	}
	h, err := GalleryHTML(sets, []int{2, 2, 1}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(h, "<tr>") != 2 || !strings.Contains(h, ">test (2)<") || !strings.Contains(h, "&lt;noise&gt; (1)") ||
		strings.Count(h, `src="data:image/png;base64,`) != 2 {
		t.Errorf("GalleryHTML = %.300s", h)
	}
}
