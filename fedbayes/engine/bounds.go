package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/strategy"
)

// Bounds on the size fields of a Spec, checked by Validate with the field's JSON path. They are far
// above any setting of the papers (Fischer et al. (2024) train for 3,000 rounds at most, with up to
// 100 clients) and far below what would overflow an int or exhaust memory in one allocation.
const (
	// MaxSettings is the largest number of settings a spec's sweep and variants may expand to.
	MaxSettings = 10_000
	// MaxSeeds is the largest number of seeds.
	MaxSeeds         = 10_000
	maxClients       = 100_000
	maxRounds        = 10_000_000
	maxEpochs        = 100_000
	maxBatchSize     = 1 << 20
	maxSamples       = 100_000
	maxBins          = 100_000
	maxWidth         = 1 << 20
	maxLayers        = 1_000
	maxPopulation    = 10_000_000
	maxExamples      = 1 << 31 // subsample, test_subsample, fairness_examples, min_size
	maxEvery         = maxRounds
	maxSettingNameIn = 400 // longest setting name quoted in an error message
	maxNameBytes     = 200 // longest spec name and setting name (results folders are NAME-seedN)
)

// boundInt checks that v <= max, naming the field.
func boundInt(path string, v, max int) error {
	if v > max {
		return specErr(path, "%d is too large; at most %d", v, max)
	}
	return nil
}

// validateBounds checks every size field of c (after defaults) against its bound.
func validateBounds(c *Spec) error {
	type bound struct {
		path   string
		v, max int
	}
	checks := []bound{
		{"dataset.subsample", c.Dataset.Subsample, maxExamples},
		{"dataset.test_subsample", c.Dataset.TestSubsample, maxExamples},
		{"partition.clients", c.Partition.Clients, maxClients},
		{"partition.min_size", c.Partition.MinSize, maxExamples},
		{"partition.shards_per_client", c.Partition.ShardsPerClient, maxExamples},
		{"partition.classes_per_client", c.Partition.ClassesPerClient, maxWidth},
		{"model.bayesian_layers", c.Model.BayesianLayers, maxLayers},
		{"aggregation.population", c.Aggregation.Population, maxPopulation},
		{"training.rounds", c.Training.Rounds, maxRounds},
		{"training.local_epochs", c.Training.LocalEpochs, maxEpochs},
		{"training.batch_size", c.Training.BatchSize, maxBatchSize},
		{"evaluation.every", c.Evaluation.Every, maxEvery},
		{"evaluation.samples", c.Evaluation.Samples, maxSamples},
		{"evaluation.bins", c.Evaluation.Bins, maxBins},
		{"evaluation.fairness_examples", c.Evaluation.FairnessExamples, maxExamples},
		{"evaluation.fairness_clients", c.Evaluation.FairnessClients, maxClients},
	}
	if p := c.Aggregation.Pretrain; p != nil {
		checks = append(checks, bound{"aggregation.pretrain.epochs", p.Epochs, maxEpochs},
			bound{"aggregation.pretrain.patience", p.Patience, maxEpochs})
	}
	if s := c.Training.Schedule; s != nil {
		checks = append(checks, bound{"training.lr_schedule.silent_rounds", s.SilentRounds, maxRounds})
	}
	for _, b := range checks {
		if err := boundInt(b.path, b.v, b.max); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		path string
		list []int
	}{{"model.hidden", c.Model.Hidden}, {"model.conv_channels", c.Model.ConvChannels}, {"model.dense_widths", c.Model.DenseWidths}} {
		if len(l.list) > maxLayers {
			return specErr(l.path, "%d layers; at most %d", len(l.list), maxLayers)
		}
		for i, v := range l.list {
			if err := boundInt(fmt.Sprintf("%s[%d]", l.path, i), v, maxWidth); err != nil {
				return err
			}
		}
	}
	if len(c.Name) > maxNameBytes {
		return specErr("name", "%d bytes; at most %d (the name is part of every results folder's name)", len(c.Name), maxNameBytes)
	}
	if len(c.Seeds) > MaxSeeds {
		return specErr("seeds", "%d seeds; at most %d", len(c.Seeds), MaxSeeds)
	}
	return checkMemory(c)
}

// dataDims are the example size, class count, test-set size and training-set size of the engine's
// datasets, for the memory estimate (an unknown name is estimated as the largest).
var dataDims = map[string][4]int{
	"fashion-mnist": {784, 10, 10000, 60000}, "mnist": {784, 10, 10000, 60000}, "digits": {64, 10, 360, 1437},
	"iris": {4, 3, 30, 120}, "wine": {13, 3, 36, 142}, "breast-cancer": {30, 2, 114, 455},
	"cifar10": {3072, 10, 10000, 50000}, "cifar100": {3072, 100, 10000, 50000}, "cifar100-coarse": {3072, 20, 10000, 50000},
	"svhn": {3072, 10, 26032, 73257},
}

// memoryNeed is MemoryEstimate's parts in bytes.
type memoryNeed struct {
	// Model is the dense layers' parameters of the global model and every client, with their
	// gradients and optimizer state.
	Model float64
	// Act is one batch of activations per client and the predictive's samples on one batch.
	Act float64
	// Pred is the predictive's class probabilities of every sample on the evaluation rows.
	Pred float64
	// Server is the networks a strategy's server step holds beyond the clients
	// (strategy.ServerNetworker: FedBE's teachers, FedKT's), each with its parameters and its class
	// probabilities on the server set.
	Server float64
	// Sites are a site-based strategy's state (strategy.ClientPriors: partitioned VI): a precision
	// and a shift in float64 for every Gaussian value of every client.
	Sites float64
}

// total is the sum of the parts.
func (m memoryNeed) total() float64 { return m.Model + m.Act + m.Pred + m.Server + m.Sites }

// MemoryEstimate returns a rough lower bound, in bytes, of the memory one run of c needs: the dense
// layers' parameters (mean and variance for Bayesian models) held by the global model and every
// client a round trains together (trainedClients) with its gradient and optimizer state, the
// activations of one batch per such client and of the
// predictive's samples on one batch, the predictive's class probabilities of every sample on the
// test set (or the scored clients' fairness examples), and the networks the strategy's server step holds
// at once (FedBE's M samples, K clients and their mean; FedKT's K s t teachers) with their class
// probabilities on the server set, and a site-based strategy's sites (16 bytes per Gaussian value
// and client). Convolutions are not counted (they are small).
func MemoryEstimate(c *Spec) float64 {
	return memoryParts(c).total()
}

// memoryParts returns MemoryEstimate's parts.
func memoryParts(c *Spec) memoryNeed {
	dims, ok := dataDims[c.Dataset.Name]
	if !ok {
		dims = [4]int{3072, 100, 26032, 73257}
		if strings.HasPrefix(c.Dataset.Name, "emnist") {
			dims = [4]int{784, 62, 116323, 697932}
		}
	}
	params, widest := denseParams(c, dims[0], dims[1])
	perWeight := 1.0
	if c.Model.Kind == "" || c.Model.Kind == models.Bayesian {
		perWeight = 2 // mean and log-variance
	}
	clients := float64(c.Partition.Clients)
	trained := float64(trainedClients(c.Partition, c.Training))
	copies := 4*trained + 2 // each client trained together: parameters, gradient, two optimizer slots; global and previous
	act := float64(c.Training.BatchSize) * widest * trained * 4
	act += float64(c.Evaluation.Samples) * float64(c.Training.BatchSize) * widest
	// The predictive keeps every sample's class probabilities: the test set, and the scored
	// clients' fairness examples (predicted together).
	test := float64(dims[2])
	if c.Dataset.TestSubsample > 0 {
		test = math.Min(test, float64(c.Dataset.TestSubsample))
	}
	evalRows := test
	if c.Evaluation.Fairness != "off" {
		scored := math.Min(clients, float64(max(c.Evaluation.scoredClients(), 1)))
		evalRows = math.Max(evalRows, scored*float64(c.Evaluation.FairnessExamples))
	}
	pred := float64(c.Evaluation.Samples) * evalRows * float64(dims[1])
	serverRows := math.Ceil(float64(dims[3]) * c.Dataset.ServerFraction)
	server := float64(serverNetworks(c)) * (params + serverRows*float64(dims[1]))
	need := memoryNeed{Model: 4 * params * perWeight * copies, Act: 4 * act, Pred: 4 * pred, Server: 4 * server} // float32
	if setsClientPriors(c) {
		need.Sites = 16 * params * clients
	}
	return need
}

// trainedClients is the number of clients the clients' network holds (its client axis K): the
// clients of a round, max(1, round(gamma C)) as partition.NewParticipation draws them, or one in
// sequential training. An idle client holds no copy of the network.
func trainedClients(p PartitionSpec, t TrainingSpec) int {
	if t.Mode == "sequential" {
		return 1
	}
	if !(p.Participation > 0 && p.Participation < 1) {
		return max(1, p.Clients)
	}
	return max(1, int(math.Round(p.Participation*float64(p.Clients))))
}

// denseParams returns the dense layers' parameter count of c's model on examples of in values and
// classes outputs, and the widest layer (the input counted).
func denseParams(c *Spec, in, classes int) (params, widest float64) {
	var widths []int
	switch c.Model.Arch {
	case models.ArchMLP, "":
		widths = c.Model.Hidden
		if widths == nil {
			widths = []int{100}
		}
	default:
		widths = c.Model.DenseWidths
		if widths == nil {
			widths = []int{120, 84}
		}
	}
	from := float64(in)
	widest = from
	for _, w := range append(append([]int(nil), widths...), classes) {
		params += from*float64(w) + float64(w)
		from = float64(w)
		widest = math.Max(widest, from)
	}
	return params, widest
}

// serverNetworks is the number of networks c's server strategy holds beyond the clients
// (strategy.ServerNetworker), 0 for a parameter-space rule or a strategy that holds none or cannot
// be built (its refusal is validateAggregation's).
func serverNetworks(c *Spec) int {
	if _, err := aggregate.ParseRule(c.Aggregation.Rule); err == nil || !strategy.Known(c.Aggregation.Rule) {
		return 0
	}
	st, err := newStrategy(c)
	if err != nil {
		return 0
	}
	if n, ok := st.(strategy.ServerNetworker); ok {
		return n.ServerNetworks()
	}
	return 0
}

// checkMemory refuses a spec whose MemoryEstimate exceeds the memory the process may use
// (runinfo.MemoryLimit: its cgroup's, address-space or Slurm limit, else the machine's).
func checkMemory(c *Spec) error {
	limit, from := runinfo.MemoryLimit()
	total := float64(limit)
	if total <= 0 {
		return nil
	}
	m := memoryParts(c)
	need := m.total()
	if need <= total {
		return nil
	}
	// Name the field behind the largest part.
	path := "model.dense_widths"
	if c.Model.Arch == models.ArchMLP || c.Model.Arch == "" {
		path = "model.hidden"
	}
	largest := m.Model
	for _, p := range []struct {
		v    float64
		path string
	}{{m.Act, "training.batch_size"}, {m.Pred, "evaluation.samples"}, {m.Server, "aggregation.options"}} {
		if p.v > largest {
			largest, path = p.v, p.path
		}
	}
	detail := ""
	if m.Server > 0 {
		detail = fmt.Sprintf(", the server step's %d networks (aggregation.options: FedBE's samples, FedKT's students x teachers) on its set", serverNetworks(c))
	}
	return specErr(path, "this setting needs about %s of memory (the dense layers' parameters for the %d clients trained together, "+
		"one batch of activations and the predictive's samples%s), more than the %s this process may use (%s); "+
		"reduce model.hidden / model.dense_widths, partition.clients, training.batch_size, evaluation.samples or "+
		"aggregation.options", gib(need), trainedClients(c.Partition, c.Training), detail, gib(total), from)
}

// gib formats bytes in GiB.
func gib(b float64) string {
	g := b / (1 << 30)
	if g < 10 {
		return strconv.FormatFloat(g, 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(math.Round(g), 'f', 0, 64) + " GiB"
}

// settingCount is the number of settings s expands to, saturated at MaxSettings+1.
func settingCount(s *Spec, paths []string) int {
	n := big.NewInt(int64(max(1, len(s.Variants))))
	for _, p := range paths {
		n.Mul(n, big.NewInt(int64(len(s.Sweep[p]))))
	}
	if n.Cmp(big.NewInt(MaxSettings)) > 0 {
		return MaxSettings + 1
	}
	return int(n.Int64())
}

// checkSweepSize refuses, before any setting is built, a sweep that expands to more than
// MaxSettings settings, giving the product of the list lengths.
func checkSweepSize(s *Spec, paths []string) error {
	if settingCount(s, paths) <= MaxSettings {
		return nil
	}
	n := big.NewInt(int64(max(1, len(s.Variants))))
	var factors []string
	if len(s.Variants) > 0 {
		factors = append(factors, fmt.Sprintf("%d variants", len(s.Variants)))
	}
	for _, p := range paths {
		n.Mul(n, big.NewInt(int64(len(s.Sweep[p]))))
		factors = append(factors, fmt.Sprintf("%d values of %s", len(s.Sweep[p]), p))
	}
	return specErr("sweep", "expands to %s settings (%s); at most %d: split it into several specs",
		n.String(), strings.Join(factors, " x "), MaxSettings)
}

// shortName cuts a setting name for an error message.
func shortName(name string) string {
	if len(name) <= maxSettingNameIn {
		return name
	}
	return name[:maxSettingNameIn] + fmt.Sprintf("... (%d bytes)", len(name))
}

// zeroDefaults lists the fields whose zero value means "the default": an explicit 0 in a spec file
// would silently run the default, so it is refused. The value is the default's text.
var zeroDefaults = map[string]string{
	"partition.clients": "10", "partition.participation": "1", "partition.alpha": "0.5",
	"partition.min_size": "10", "partition.shards_per_client": "2", "partition.classes_per_client": "2",
	"partition.sizes.exponent": "1", "partition.sizes.sigma": "1", "partition.sizes.beta": "0.5", "partition.sampling.candidates": "min(C, 2 m)",
	"model.prior_std": "1", "model.init_logvar": strconv.FormatFloat(models.DefaultInitLogVar, 'g', -1, 64), "model.kl_weight": "1", "model.dropout_rate": "0.2",
	"aggregation.population":      strconv.Itoa(aggregate.DefaultPopulationSize),
	"aggregation.pretrain.epochs": "100", "aggregation.pretrain.patience": "10",
	"aggregation.pretrain.validation_fraction": "0.1",
	"training.rounds":                          "10", "training.local_epochs": "1", "training.batch_size": "64", "training.lr": "0.01",
	"training.variance_lr": strconv.FormatFloat(models.DefaultSpreadLearningRate, 'g', -1, 64),
	"evaluation.every":     "1", "evaluation.samples": "10 (1 for deterministic models)", "evaluation.bins": "15",
	"evaluation.fairness_examples": "200", "evaluation.fairness_clients": strconv.Itoa(DefaultFairnessClients),
}

// checkExplicitZeros refuses an explicit 0 at one of the zeroDefaults paths of a generic JSON spec
// (numbers as json.Number or float64).
func checkExplicitZeros(m map[string]any) error {
	for _, path := range slices.Sorted(maps.Keys(zeroDefaults)) {
		var v any = m
		for _, part := range strings.Split(path, ".") {
			obj, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = obj[part]
		}
		if isZeroNumber(v) {
			return specErr(path, "0 is not allowed here: 0 would silently mean the default %s; leave the field out for "+
				"the default, or give the value you mean", zeroDefaults[path])
		}
	}
	return nil
}

// checkExplicitZerosJSON is checkExplicitZeros on a JSON document.
func checkExplicitZerosJSON(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil // a type error, reported by the decoder with its position
	}
	return checkExplicitZeros(m)
}

// isZeroNumber reports whether v is the number 0.
func isZeroNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case float64:
		return x == 0
	}
	return false
}
