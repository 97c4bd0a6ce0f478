package predictive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// BetaFile is the file, in the run directory of a beta-PredBayes method, that holds the fitted beta
// and the server NLL-versus-beta curve (a BetaFit as JSON).
const BetaFile = "beta.json"

// Outcome is one method's evaluation in one trial (one h and one seed).
type Outcome struct {
	Method string
	H      float64
	Seed   int64
	// Metrics by results name: accuracy, nll, ece (classification); mse, nll (regression); beta for
	// the beta-PredBayes methods.
	Metrics map[string]float64
	// Beta is the fitted beta with its curve (beta-PredBayes methods only).
	Beta *BetaFit
	// Dir is the run directory written.
	Dir string
}

// Run executes the spec: for every h and seed, it splits the data, trains the clients once with the
// sampler (for the predictive-space methods, FedPA and EP-MCMC) and once with the local optimiser
// (for FedAvg, OneshotFL and FedBE), runs FedKT's own teachers and students, evaluates every method on the test set and writes one results run
// per method, h and seed under outDir (setting NAME-hH-METHOD, labels method, h and dataset; round
// 1). Trials whose runs are all complete already are skipped, so an interrupted Run can be repeated.
// Progress lines go to log (may be nil).
func Run(spec Spec, outDir string, log io.Writer) ([]Outcome, error) {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec.Budget = spec.DescribeBudget() // what runs, not a preset's label
	if log == nil {
		log = io.Discard
	}
	if _, err := backend.Default(); err != nil {
		return nil, err
	}
	dir := spec.DataDir
	if dir == "" {
		dir = data.Dir()
	}
	info := runinfo.Collect(backend.Current().Config) // once: it may ask git
	info.Kernels = backend.Kernels(info.Backend)
	var out []Outcome
	for _, seed := range spec.Seeds {
		train, test, err := loadData(spec, dir, seed)
		if err != nil {
			return nil, err
		}
		for _, h := range spec.H {
			done, err := trialDone(spec, outDir, h, seed)
			if err != nil {
				return nil, err
			}
			if done {
				fmt.Fprintf(log, "h=%g seed=%d: already complete, skipped\n", h, seed)
				continue
			}
			start := time.Now()
			res, err := runTrial(spec, train, test, h, seed, outDir, info)
			if err != nil {
				return nil, fmt.Errorf("predictive: h=%g seed=%d: %w", h, seed, err)
			}
			for _, o := range res {
				fmt.Fprintf(log, "h=%g seed=%d %-17s %s\n", h, seed, o.Method, formatMetrics(o.Metrics))
			}
			fmt.Fprintf(log, "h=%g seed=%d: %.1fs\n", h, seed, time.Since(start).Seconds())
			out = append(out, res...)
		}
	}
	return out, nil
}

// settingName is the results setting of a method at h.
func settingName(spec Spec, h float64, method string) string {
	return fmt.Sprintf("%s-h%s-%s", spec.Name, strconv.FormatFloat(h, 'g', -1, 64), method)
}

// trialDone reports whether every method's run of (h, seed) is complete; a run directory that
// exists without being complete is an error (remove it to rerun).
func trialDone(spec Spec, outDir string, h float64, seed int64) (bool, error) {
	all := true
	for _, m := range spec.Methods {
		d := filepath.Join(outDir, results.RunName(settingName(spec, h, m), seed))
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			all = false
			continue
		}
		r, err := results.ReadRun(d)
		if err != nil || r.Status.State != results.Completed {
			return false, fmt.Errorf("predictive: %s exists but is not a completed run; remove it to rerun", d)
		}
		if err := r.Check(nil); err != nil {
			return false, fmt.Errorf("predictive: %s holds a completed run whose rows cannot be trusted (%v); remove it to rerun", d, err)
		}
		want, err := trialMeta(spec, h, m, seed, runinfo.Info{}) // Differs does not compare provenance
		if err != nil {
			return false, err
		}
		if why := r.Meta.Differs(want); why != "" {
			return false, fmt.Errorf("predictive: %s holds a completed run of a different spec (%s); remove it or choose another results directory", d, why)
		}
	}
	return all, nil
}

// trialMeta is the run.json of a method's run at h for one seed, with provenance info.
func trialMeta(spec Spec, h float64, method string, seed int64, info runinfo.Info) (results.Meta, error) {
	labels := map[string]string{"method": method, "h": strconv.FormatFloat(h, 'g', -1, 64), "dataset": spec.Dataset}
	return results.NewMeta(settingName(spec, h, method), labels, seed, runSpec{Spec: spec, H: h}, info)
}

// loadData loads the dataset, standardises regression targets, and subsamples.
func loadData(spec Spec, dir string, seed int64) (train, test *data.Dataset, err error) {
	train, test, err = data.Load(spec.Dataset, dir, data.WithSeed(uint64(seed)))
	if err != nil {
		return nil, nil, err
	}
	if train.IsRegression() != spec.IsRegression() {
		return nil, nil, fmt.Errorf("predictive: dataset %q: regression %v, but the spec treats it as regression %v", spec.Dataset, train.IsRegression(), spec.IsRegression())
	}
	if train.IsRegression() {
		st, err := data.FitStandardizer(train)
		if err != nil {
			return nil, nil, err
		}
		if train, err = st.ApplyTargets(train); err != nil {
			return nil, nil, err
		}
		if test, err = st.ApplyTargets(test); err != nil {
			return nil, nil, err
		}
	}
	if spec.Subsample > 0 && spec.Subsample < train.Len() {
		if train, _, err = data.Split(train, float64(spec.Subsample)/float64(train.Len()), uint64(seed)); err != nil {
			return nil, nil, err
		}
	}
	if spec.TestSubsample > 0 && spec.TestSubsample < test.Len() {
		if test, _, err = data.Split(test, float64(spec.TestSubsample)/float64(test.Len()), uint64(seed)+1); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// trial holds what one (h, seed) shares between methods.
type trial struct {
	spec          Spec
	h             float64
	seed          int64
	cfg           models.Config
	server, test  *data.Dataset
	clients       []*data.Dataset
	sizes         []float64
	regression    bool
	want          map[string]bool
	outcomes      map[string]*Outcome
	teachers      []Teacher
	teacherOf     []string
	local, sample time.Duration
	fedkt         time.Duration
	info          runinfo.Info
}

// runTrial runs every method for one h and seed and writes their runs.
func runTrial(spec Spec, train, test *data.Dataset, h float64, seed int64, outDir string, info runinfo.Info) ([]Outcome, error) {
	server, rest, err := data.SplitServer(train, spec.ServerFraction, uint64(seed))
	if err != nil {
		return nil, err
	}
	t := &trial{spec: spec, h: h, seed: seed, server: server, test: test, regression: train.IsRegression(),
		want: map[string]bool{}, outcomes: map[string]*Outcome{}, info: info}
	for _, m := range spec.Methods {
		t.want[m] = true
	}
	var p *partition.Partition
	if t.regression {
		col := 0
		if spec.SortFeature != "" {
			col = -1
			for i, n := range rest.FeatureNames {
				if n == spec.SortFeature {
					col = i
				}
			}
			if col < 0 {
				return nil, fmt.Errorf("sort_feature %q is not a feature of %s (features: %v)", spec.SortFeature, spec.Dataset, rest.FeatureNames)
			}
		}
		F := rest.ExampleSize()
		keys := make([]float32, rest.Len())
		for i := range keys {
			keys[i] = rest.X[i*F+col]
		}
		p, err = partition.SortedByKey(keys, spec.Clients, h, uint64(seed))
	} else {
		p, err = partition.Heterogeneity(rest.Labels, rest.NumClasses, spec.Clients, h, uint64(seed))
	}
	if err != nil {
		return nil, err
	}
	for k, idx := range p.Clients {
		d, err := rest.Select(idx)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
		t.clients = append(t.clients, d)
		t.sizes = append(t.sizes, float64(d.Len()))
	}
	t.cfg = models.Config{Arch: models.ArchMLP, InputShape: train.Shape, Hidden: spec.Hidden, Clients: spec.Clients, Seed: seed}
	if t.regression {
		t.cfg.Task, t.cfg.LearnNoise, t.cfg.NoiseVar = models.Regression, true, spec.NoiseVar
	} else {
		t.cfg.Task, t.cfg.NumClasses = models.Classification, train.NumClasses
	}
	if t.any(MethodFedPA, MethodEPMCMC, MethodBCM, MethodDBCM, MethodMixture, MethodBeta, MethodDBeta) {
		if err := t.samplingMethods(); err != nil {
			return nil, err
		}
	}
	if t.any(MethodFedAvg, MethodOneshot, MethodFedBE) {
		if err := t.optimisedMethods(); err != nil {
			return nil, err
		}
	}
	if len(t.teachers) > 0 {
		if err := t.distill(); err != nil {
			return nil, err
		}
	}
	// FedKT trains models of its own, last, from RNG streams of its own: the other methods' numbers
	// do not depend on whether it runs.
	if t.want[MethodFedKT] {
		if err := t.fedktMethod(); err != nil {
			return nil, err
		}
	}
	var out []Outcome
	for _, m := range spec.Methods {
		o := t.outcomes[m]
		if o == nil {
			return nil, fmt.Errorf("method %s produced no result", m)
		}
		if err := t.write(o, outDir); err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, nil
}

func (t *trial) any(methods ...string) bool {
	for _, m := range methods {
		if t.want[m] {
			return true
		}
	}
	return false
}

// newModel builds the clients' model with a common initialisation (client 0's), as a federated
// round starts every client from the same global model.
func (t *trial) newModel() (*models.Model, error) {
	m, err := models.New(t.cfg)
	if err != nil {
		return nil, err
	}
	p0, err := m.ClientPosterior(0)
	if err != nil {
		return nil, err
	}
	return m, m.SetPosterior(p0)
}

// samplingMethods runs the sampler and evaluates FedPA, EP-MCMC, BCM, mixture and beta-PredBayes;
// it queues the teachers of the distilled variants.
func (t *trial) samplingMethods() error {
	m, err := t.newModel()
	if err != nil {
		return err
	}
	x0, err := m.ClientPosterior(0) // the common start, FedPA's x0
	if err != nil {
		return err
	}
	sc := t.spec.Sampler
	sc.Seed = t.seed*101 + 7
	start := time.Now()
	samples, err := Sample(m, t.clients, sc)
	if err != nil {
		return err
	}
	t.sample = time.Since(start)
	if t.want[MethodFedPA] {
		g, err := FedPA(x0, samples.Models, t.sizes, t.spec.FedPA)
		if err != nil {
			return err
		}
		if err := t.recordModel(MethodFedPA, g); err != nil {
			return err
		}
	}
	if t.want[MethodEPMCMC] {
		g, err := EPMCMC(samples.Models, sc.PriorStd)
		if err != nil {
			return err
		}
		draws, err := DrawModels(g, t.spec.EPDraws, t.seed*17+3)
		if err != nil {
			return err
		}
		probs, mean, variance, err := EnsembleMean(t.cfg, draws, t.test.X)
		if err != nil {
			return err
		}
		if err := t.record(MethodEPMCMC, probs, mean, variance, nil); err != nil {
			return err
		}
	}
	if !t.any(MethodBCM, MethodDBCM, MethodMixture, MethodBeta, MethodDBeta) {
		return nil
	}
	onTest, err := PredictSamples(m, samples.Models, t.test.X)
	if err != nil {
		return err
	}
	onServer, err := PredictSamples(m, samples.Models, t.server.X)
	if err != nil {
		return err
	}
	if t.regression {
		return t.gaussMethods(onTest, onServer)
	}
	testAgg, err := NewClassAggregate(onTest.Probs, t.sizes, nil, onTest.Classes)
	if err != nil {
		return err
	}
	serverAgg, err := NewClassAggregate(onServer.Probs, t.sizes, nil, onServer.Classes)
	if err != nil {
		return err
	}
	if err := t.record(MethodBCM, testAgg.Product(), nil, nil, nil); err != nil {
		return err
	}
	if err := t.record(MethodMixture, testAgg.Mixture(), nil, nil, nil); err != nil {
		return err
	}
	if t.want[MethodDBCM] {
		t.teachers = append(t.teachers, Teacher{Probs: serverAgg.Product()})
		t.teacherOf = append(t.teacherOf, MethodDBCM)
	}
	if t.any(MethodBeta, MethodDBeta) {
		fit, err := FitBetaClass(serverAgg, t.server.Labels, t.spec.Beta)
		if err != nil {
			return err
		}
		if err := t.record(MethodBeta, testAgg.Beta(fit.Beta), nil, nil, &fit); err != nil {
			return err
		}
		if t.want[MethodDBeta] {
			t.teachers = append(t.teachers, Teacher{Probs: serverAgg.Beta(fit.Beta)})
			t.teacherOf = append(t.teacherOf, MethodDBeta)
			t.outcomes[MethodDBeta] = &Outcome{Beta: &fit}
		}
	}
	return nil
}

// gaussMethods evaluates the regression BCM, mixture and beta-PredBayes. The prior predictive of
// the BCM correction is estimated from prior draws of the clients' network.
func (t *trial) gaussMethods(onTest, onServer *ClientPredictive) error {
	pm, err := t.newModel()
	if err != nil {
		return err
	}
	x := append(append([]float32(nil), t.test.X...), t.server.X...)
	prior, err := PriorPredictive(pm, x, 200, t.spec.Sampler.PriorStd, t.seed*31+5)
	if err != nil {
		return err
	}
	nt := t.test.Len()
	testAgg, err := NewGaussAggregate(onTest.Mean, onTest.Var, t.sizes, prior.Mean[:nt], prior.Var[:nt])
	if err != nil {
		return err
	}
	serverAgg, err := NewGaussAggregate(onServer.Mean, onServer.Var, t.sizes, prior.Mean[nt:], prior.Var[nt:])
	if err != nil {
		return err
	}
	m, v := testAgg.Product()
	if err := t.record(MethodBCM, nil, m, v, nil); err != nil {
		return err
	}
	m, v = testAgg.Mixture()
	if err := t.record(MethodMixture, nil, m, v, nil); err != nil {
		return err
	}
	if t.want[MethodBeta] {
		fit, err := FitBetaGauss(serverAgg, t.server.Targets, t.spec.Beta)
		if err != nil {
			return err
		}
		m, v = testAgg.Beta(fit.Beta)
		if err := t.record(MethodBeta, nil, m, v, &fit); err != nil {
			return err
		}
	}
	return nil
}

// optimisedMethods trains the clients with the local optimiser and evaluates FedAvg and FedBE; it
// queues OneshotFL's teacher.
func (t *trial) optimisedMethods() error {
	m, err := t.newModel()
	if err != nil {
		return err
	}
	lc := t.spec.Local
	lc.Seed = t.seed*103 + 11
	start := time.Now()
	if _, err := TrainClients(m, t.clients, lc); err != nil {
		return err
	}
	t.local = time.Since(start)
	trained, err := m.Posterior()
	if err != nil {
		return err
	}
	if t.want[MethodFedAvg] {
		g, err := FedAvgModel(trained, t.sizes)
		if err != nil {
			return err
		}
		if err := t.recordModel(MethodFedAvg, g); err != nil {
			return err
		}
	}
	if t.want[MethodFedBE] {
		fc := t.spec.FedBE
		fc.Seed = t.seed*107 + 13
		g, err := FedBEServer(t.cfg, trained, t.sizes, t.server.X, fc, 1)
		if err != nil {
			return err
		}
		if err := t.recordModel(MethodFedBE, g); err != nil {
			return err
		}
	}
	if t.want[MethodOneshot] {
		cp, err := PredictModel(m, t.server.X, 1)
		if err != nil {
			return err
		}
		avg, err := LogitAverage(cp.Probs, cp.Classes)
		if err != nil {
			return err
		}
		t.teachers = append(t.teachers, Teacher{Probs: avg})
		t.teacherOf = append(t.teacherOf, MethodOneshot)
	}
	return nil
}

// fedktMethod runs FedKT on the clients and the server set and evaluates its final model.
func (t *trial) fedktMethod() error {
	cfg := t.cfg
	cfg.Seed = t.seed*127 + 23
	kc := t.spec.FedKT
	kc.Seed = t.seed*131 + 29
	start := time.Now()
	g, err := FedKT(cfg, t.clients, t.server.X, kc)
	if err != nil {
		return err
	}
	t.fedkt = time.Since(start)
	return t.recordModel(MethodFedKT, g)
}

// distill trains one student per queued teacher (as the clients of one model) and evaluates them.
func (t *trial) distill() error {
	cfg := t.cfg
	cfg.Clients = len(t.teachers)
	cfg.Seed = t.seed*109 + 17
	student, err := models.New(cfg)
	if err != nil {
		return err
	}
	dc := t.spec.Distill
	dc.Seed = t.seed*113 + 19
	if err := Distill(student, t.server.X, t.teachers, dc); err != nil {
		return err
	}
	cp, err := PredictModel(student, t.test.X, 1)
	if err != nil {
		return err
	}
	for k, method := range t.teacherOf {
		var fit *BetaFit
		if o := t.outcomes[method]; o != nil {
			fit = o.Beta
		}
		if err := t.record(method, cp.Probs[k], nil, nil, fit); err != nil {
			return err
		}
	}
	return nil
}

// recordModel evaluates one global model (unstacked posterior).
func (t *trial) recordModel(method string, g *posterior.Posterior) error {
	st, err := posterior.Stack([]*posterior.Posterior{g})
	if err != nil {
		return err
	}
	probs, mean, variance, err := EnsembleMean(t.cfg, st, t.test.X)
	if err != nil {
		return err
	}
	return t.record(method, probs, mean, variance, nil)
}

// record computes a method's test metrics.
func (t *trial) record(method string, probs, mean, variance []float32, fit *BetaFit) error {
	if !t.want[method] {
		return nil
	}
	o := &Outcome{Method: method, H: t.h, Seed: t.seed, Metrics: map[string]float64{}, Beta: fit}
	if t.regression {
		r, err := metrics.EvaluateRegression(mean, variance, t.test.Targets)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		o.Metrics[results.MSE] = r.MSE
		o.Metrics[results.NLL] = r.NLL
	} else {
		r, err := metrics.EvaluateClassification(probs, t.test.Labels, t.test.NumClasses, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		o.Metrics[results.Accuracy] = r.Accuracy
		o.Metrics[results.NLL] = r.NLL
		o.Metrics[results.ECE] = r.ECE
	}
	if fit != nil {
		o.Metrics["beta"] = fit.Beta
	}
	t.outcomes[method] = o
	return nil
}

// runSpec is what run.json stores: the spec and the trial's h.
type runSpec struct {
	Spec Spec    `json:"spec"`
	H    float64 `json:"h"`
}

// write records an outcome as a completed one-round run.
func (t *trial) write(o *Outcome, outDir string) error {
	meta, err := trialMeta(t.spec, t.h, o.Method, t.seed, t.info)
	if err != nil {
		return err
	}
	o.Dir = filepath.Join(outDir, results.RunName(meta.Setting, t.seed))
	w, err := results.Create(o.Dir, meta)
	if err != nil {
		return err
	}
	local := t.local
	switch o.Method {
	case MethodFedPA, MethodEPMCMC, MethodBCM, MethodDBCM, MethodMixture, MethodBeta, MethodDBeta:
		local = t.sample
	case MethodFedKT:
		local = t.fedkt // the clients' teachers and students and the server's model
	}
	row := results.Row{Round: 1, Metrics: o.Metrics, Time: results.Timing{LocalSeconds: local.Seconds()}}
	for k := range t.clients {
		row.Clients = append(row.Clients, k)
	}
	if err := w.Append(row); err != nil {
		_ = w.Fail(1, err)
		return err
	}
	if o.Beta != nil {
		b, err := json.MarshalIndent(o.Beta, "", "  ")
		if err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(o.Dir, BetaFile), append(b, '\n'), 0o644); err != nil {
			_ = w.Fail(1, err)
			return err
		}
	}
	return w.Complete(1)
}

// formatMetrics prints metrics in a fixed order.
func formatMetrics(m map[string]float64) string {
	s := ""
	for _, k := range []string{results.Accuracy, results.MSE, results.NLL, results.ECE, "beta"} {
		if v, ok := m[k]; ok {
			s += fmt.Sprintf(" %s %.4f", k, v)
		}
	}
	return s
}
