package models

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

func TestConfigErrors(t *testing.T) {
	ok := Config{Options: Options{Arch: ArchMLP}, InputShape: []int{4}, NumClasses: 3}
	tests := []struct {
		name   string
		change func(c *Config)
		want   string // substring of the error
	}{
		{"no arch", func(c *Config) { c.Arch = "" }, "Config.Arch: missing"},
		{"bad arch", func(c *Config) { c.Arch = "vgg" }, `unknown architecture "vgg"`},
		{"one class", func(c *Config) { c.NumClasses = 1 }, "Config.NumClasses"},
		{"regression classes", func(c *Config) { c.Task = Regression; c.NumClasses = 3 }, "Config.NumClasses"},
		{"bad task", func(c *Config) { c.Task = "ranking" }, "Config.Task"},
		{"no input", func(c *Config) { c.InputShape = nil }, "Config.InputShape: missing"},
		{"negative dim", func(c *Config) { c.InputShape = []int{4, -1} }, "dimension 1 is -1"},
		{"zero width", func(c *Config) { c.Hidden = []int{10, 0} }, "Config.Hidden: entry 1 is 0"},
		{"lenet flat", func(c *Config) { c.Arch = ArchLeNet }, "needs an image shape"},
		{"lenet tiny", func(c *Config) { c.Arch = ArchLeNet; c.InputShape = []int{8, 8, 1} }, "too small"},
		{"resnet stages", func(c *Config) {
			c.Arch = ArchResNet20
			c.InputShape = []int{32, 32, 3}
			c.ConvChannels = []int{16, 32}
		}, "exactly 3 stages"},
		{"bad kind", func(c *Config) { c.Kind = "ensemble" }, "Config.Kind"},
		{"hybrid too deep", func(c *Config) { c.Kind = Bayesian; c.BayesianLayers = 3 }, "has 2 weight layers"},
		{"hybrid not bayesian", func(c *Config) { c.BayesianLayers = 1 }, "Kind is \"deterministic\""},
		{"bad estimator", func(c *Config) { c.Estimator = "mcmc" }, "Config.Estimator"},
		{"bad varparam", func(c *Config) { c.VarParam = "exp" }, "Config.VarParam"},
		{"negative prior", func(c *Config) { c.PriorStd = -1 }, "Config.PriorStd"},
		{"init logvar", func(c *Config) { c.InitLogVar = -40 }, "Config.InitLogVar"},
		{"kl weight", func(c *Config) { c.KLWeight = -1 }, "Config.KLWeight"},
		{"dropout", func(c *Config) { c.DropoutRate = 1 }, "Config.DropoutRate"},
		{"noise", func(c *Config) { c.NoiseVar = -2 }, "Config.NoiseVar"},
		{"learn noise classification", func(c *Config) { c.LearnNoise = true }, "Config.LearnNoise"},
		{"clients", func(c *Config) { c.Clients = -3 }, "Config.Clients"},
		{"dtype", func(c *Config) { c.DType = dtypes.Int32 }, "Config.DType"},
	}
	for _, tc := range tests {
		c := ok
		tc.change(&c)
		_, err := New(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewWithBackend(testBackend(t), ok); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// TestShapeError checks that an input shape the architecture cannot take comes back as a
// *ShapeError naming the architecture and the shape, and that other Config errors do not.
func TestShapeError(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		shape bool // whether the error is a *ShapeError
	}{
		{"lenet on 8x8 digits", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{8, 8, 1}, NumClasses: 10}, true},
		{"cnn3 on a table", Config{Options: Options{Arch: ArchCNN3}, InputShape: []int{64}, NumClasses: 10}, true},
		{"cnn3 on 4x4 images", Config{Options: Options{Arch: ArchCNN3}, InputShape: []int{4, 4, 3}, NumClasses: 10}, true},
		{"negative dimension", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{28, -1, 1}, NumClasses: 10}, false},
		{"one class", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{8, 8, 1}, NumClasses: 1}, false},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		var se *ShapeError
		if got := errors.As(err, &se); got != tc.shape {
			t.Errorf("%s: errors.As(%v, *ShapeError) = %v, want %v", tc.name, err, got, tc.shape)
			continue
		}
		if se != nil && (se.Arch != tc.cfg.Arch || !slices.Equal(se.Shape, tc.cfg.InputShape) || se.Reason == "") {
			t.Errorf("%s: ShapeError %+v, want Arch %q, Shape %v and a reason", tc.name, *se, tc.cfg.Arch, tc.cfg.InputShape)
		}
	}
}

func TestOptimizerConfigErrors(t *testing.T) {
	m := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{}}, InputShape: []int{2}, NumClasses: 2})
	tests := []struct {
		oc   OptimizerConfig
		want string
	}{
		{OptimizerConfig{LearningRate: 0.1}, "OptimizerConfig.Kind"},
		{OptimizerConfig{Kind: SGD}, "OptimizerConfig.LearningRate"},
		{OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 1}, "OptimizerConfig.Momentum"},
		{OptimizerConfig{Kind: Adam, LearningRate: 0.1, Momentum: 0.9}, "use Beta1"},
		{OptimizerConfig{Kind: SGD, LearningRate: 0.1, WeightDecay: -1}, "OptimizerConfig.WeightDecay"},
		{OptimizerConfig{Kind: Adam, LearningRate: 0.1, Beta2: 1}, "OptimizerConfig.Beta2"},
	}
	for _, tc := range tests {
		_, err := m.NewTrainer(tc.oc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want it to contain %q", tc.oc, err, tc.want)
		}
	}
}

func TestStepInputErrors(t *testing.T) {
	m := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{}}, InputShape: []int{2}, NumClasses: 2, Clients: 2})
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 2*3*2)
	tests := []struct {
		b    Batch
		want string
	}{
		{Batch{X: x, Labels: make([]int32, 6), DatasetSizes: []int{3}}, "DatasetSizes has 1 entries"},
		{Batch{X: x, Labels: make([]int32, 6), DatasetSizes: []int{3, 0}}, "DatasetSizes[1] = 0"},
		{Batch{X: x[:5], Labels: make([]int32, 6), DatasetSizes: []int{3, 3}}, "len(Batch.X) = 5"},
		{Batch{X: x, Labels: make([]int32, 4), DatasetSizes: []int{3, 3}}, "len(Batch.Labels) = 4"},
		{Batch{X: x, Labels: []int32{0, 1, 0, 0, 2, 0}, DatasetSizes: []int{3, 3}}, "client 1, example 1: label 2"},
	}
	for _, tc := range tests {
		_, err := tr.Step(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want it to contain %q", err, tc.want)
		}
	}
	if _, err := m.Predict(x[:3], 1); err == nil || !strings.Contains(err.Error(), "len(x) = 3") {
		t.Errorf("Predict with a partial example: got %v", err)
	}
	if _, err := m.Predict(x, 0); err == nil || !strings.Contains(err.Error(), "samples = 0") {
		t.Errorf("Predict with no samples: got %v", err)
	}
	// A second trainer replaces the first.
	if _, err := m.NewTrainer(OptimizerConfig{Kind: Adam, LearningRate: 0.1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(Batch{X: x, Labels: make([]int32, 6), DatasetSizes: []int{3, 3}}); err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("stale trainer: got %v", err)
	}
}

// TestAsDeterministic checks that a Bayesian LeNet with variational dense layers becomes a valid
// deterministic LeNet with the same parameter names (so its means load).
func TestAsDeterministic(t *testing.T) {
	c := Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, BayesianLayers: 3}, InputShape: []int{28, 28, 1}, NumClasses: 10, Clients: 1}
	d := c.AsDeterministic()
	if d.Kind != Deterministic || d.BayesianLayers != 0 || d.Arch != c.Arch {
		t.Fatalf("AsDeterministic gave %+v", d)
	}
	bm, dm := newModel(t, c), newModel(t, d)
	if !slices.Equal(bm.ParamNames(), dm.ParamNames()) {
		t.Errorf("parameter names differ: %v and %v", bm.ParamNames(), dm.ParamNames())
	}
}

// TestValidateAsNew checks that Config.Validate, which builds nothing, gives exactly the error New
// gives (the same text, and a *ShapeError where New's is one), and nil for a config New builds.
func TestValidateAsNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"valid mlp", Config{Options: Options{Arch: ArchMLP}, InputShape: []int{4}, NumClasses: 3}},
		{"valid lenet", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{28, 28, 1}, NumClasses: 10}},
		{"lenet on 8x8 digits", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{8, 8, 1}, NumClasses: 10}},
		{"cnn3 on a table", Config{Options: Options{Arch: ArchCNN3}, InputShape: []int{64}, NumClasses: 10}},
		{"no arch", Config{InputShape: []int{4}, NumClasses: 3}},
		{"hybrid too deep", Config{Options: Options{Arch: ArchMLP, Kind: Bayesian, BayesianLayers: 3}, InputShape: []int{4}, NumClasses: 3}},
		{"dropout", Config{Options: Options{Arch: ArchMLP, DropoutRate: 1}, InputShape: []int{4}, NumClasses: 3}},
	}
	for _, tc := range tests {
		verr := tc.cfg.Validate()
		_, nerr := New(tc.cfg)
		if (verr == nil) != (nerr == nil) || (verr != nil && verr.Error() != nerr.Error()) {
			t.Errorf("%s: Validate gives %v, New gives %v", tc.name, verr, nerr)
			continue
		}
		var vs, ns *ShapeError
		if errors.As(verr, &vs) != errors.As(nerr, &ns) {
			t.Errorf("%s: Validate's error %v and New's %v differ in being a *ShapeError", tc.name, verr, nerr)
		}
	}
}

// TestOptionsJSON pins the JSON of Options, an engine spec's "model" object: every field's key, in
// order, omitted when zero, and a round trip that keeps every value.
func TestOptionsJSON(t *testing.T) {
	full := Options{Arch: ArchLeNet, Kind: Bayesian, Hidden: []int{3}, ConvChannels: []int{2, 4}, DenseWidths: []int{5},
		BayesianLayers: 2, Estimator: Flipout, VarParam: SoftplusParam, PriorStd: 10, InitLogVar: -4, KLWeight: 0.5,
		DropoutRate: 0.1, NoiseVar: 0.5, Compat: CompatBFLP}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"zero", Options{}, `{}`},
		{"full", full, `{"arch":"lenet","kind":"bayesian","hidden":[3],"conv_channels":[2,4],"dense_widths":[5],` +
			`"bayesian_layers":2,"estimator":"flipout","var_param":"softplus","prior_std":10,"init_logvar":-4,` +
			`"kl_weight":0.5,"dropout_rate":0.1,"noise_var":0.5,"compat":"bfl-p"}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
		var back Options
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tc.o) {
			t.Errorf("%s: round trip %+v (%v), want %+v", tc.name, back, err, tc.o)
		}
	}
}
