package models

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// Arch names a network architecture.
type Arch string

const (
	// ArchMLP is a fully connected net with ReLU hidden layers of widths Config.Hidden
	// (Hasan (2023), Section 5: one hidden layer of 100 units).
	ArchMLP Arch = "mlp"
	// ArchLeNet is the LeNet-style CNN of Ozer et al. (2022), appendix, and Jamoussi et al. (BA-BFL),
	// Section 5: two 5x5 convolutions, each followed by ReLU and 2x2 max-pooling, then dense 120 -> 84 ->
	// classes (no padding: 400 features after the convolutions on 32x32 inputs, 256 on 28x28).
	ArchLeNet Arch = "lenet"
	// ArchCNN3 is the CIFAR CNN of Hasan (2023), Section 5: three (3x3 "same" convolution, ReLU, 2x2
	// max-pool) stages and one dense layer.
	ArchCNN3 Arch = "cnn3"
	// ArchResNet20 is the CIFAR ResNet-20 of He et al. (2016) used by Fischer et al. (2024), Section 3.2:
	// a 3x3 convolution, three stages of three basic residual blocks (16, 32, 64 channels; stride 2 at
	// the start of stages 2 and 3, with 1x1 projection shortcuts there), global average pooling, dense.
	// Each convolution is followed by per-client batch normalisation.
	ArchResNet20 Arch = "resnet20"
)

// Kind is how a network represents its weights.
type Kind string

const (
	// Deterministic nets have point-estimate weights (FedAvg-style nets).
	Deterministic Kind = "deterministic"
	// MCDropout nets are deterministic nets with dropout after every hidden layer, kept on at prediction
	// (Gal and Ghahramani 2016; Fischer et al. (2024), Section 3.2 use rate 0.2).
	MCDropout Kind = "mcdropout"
	// Bayesian nets have mean-field Gaussian weights in all or in the last Config.BayesianLayers weight
	// layers (Blundell et al. 2015; hybrids: Jamoussi et al. (BA-BFL), Section 5).
	Bayesian Kind = "bayesian"
)

// Estimator is how a Bayesian layer samples its output.
type Estimator string

const (
	// Reparam samples the weights, w = mu + sigma * eps, once per forward pass and shares the sample
	// across the batch (Blundell et al. 2015).
	Reparam Estimator = "reparam"
	// LocalReparam samples pre-activations instead of weights: for y = x w, y ~ N(x mu, x^2 sigma^2),
	// independently per example (Kingma, Salimans and Welling 2015). This is what Ozer et al. (2022) use.
	// On convolutions it samples each output position independently (the marginals are exact; the
	// correlations between positions of one example are dropped).
	LocalReparam Estimator = "local"
	// Flipout shares one weight perturbation per forward pass and decorrelates examples with random
	// sign flips of inputs and outputs (Wen et al. 2018); Fischer et al. (2024) use it. Biases are sampled
	// by reparameterisation, as in TensorFlow Probability's Flipout layers.
	Flipout Estimator = "flipout"
)

// VarParam is how a Bayesian layer parameterises its standard deviations.
type VarParam string

const (
	// LogVarParam trains alpha = log sigma^2 directly, the "implementation trick" of Ozer et al. (2022),
	// Section 3, which AALV aggregation averages. The value used is clamped to [LogVarMin, LogVarMax].
	LogVarParam VarParam = "logvar"
	// SoftplusParam trains rho with sigma = softplus(rho) = log(1 + exp(rho)) (Blundell et al. 2015). The
	// sigma used is clamped to [exp(LogVarMin/2), exp(LogVarMax/2)]. Posteriors carry log sigma^2: the
	// model converts at the boundary in float64.
	SoftplusParam VarParam = "softplus"
)

// Task selects the likelihood of the output head.
type Task string

const (
	// Classification uses a softmax over Config.NumClasses logits and the categorical likelihood.
	Classification Task = "classification"
	// Regression uses one output, the mean of a Gaussian likelihood N(y; f(x), s_n^2) whose noise
	// variance is fixed (Config.NoiseVar) or learned per client (Config.LearnNoise).
	Regression Task = "regression"
)

// Clamp range of log sigma^2 for every Gaussian weight: sigma in [4.5e-5, 54.6]. Values outside are
// clamped in the forward pass (their gradient is then zero), so a diverging variance cannot produce
// Inf or NaN, and a posterior read from a model always lies in this range.
const (
	LogVarMin = -20.0
	LogVarMax = 8.0
)

// Defaults applied by Config.withDefaults to zero-valued fields.
const (
	DefaultPriorStd = 1.0 // N(0, 1) prior of Ozer et al. (2022), Section 4.
	// DefaultInitLogVar is sigma = e^-3 = 0.050 at start: TensorFlow Probability's mean-field start
	// (tfp.layers.default_mean_field_normal_fn: sigma = softplus(rho), rho ~ N(-3, 0.1), so
	// sigma = 0.049). It was -10 (sigma = 6.7e-3, softplus(-5), a common Bayes-by-backprop start after
	// Blundell et al. 2015), four units further below where the ELBO takes the variances of the papers'
	// nets on Fashion-MNIST (log sigma^2 near -0.5, measured in docs/models.md). The start alone does
	// not make the variances learn: under SGD at the papers' rates neither moves them (see
	// OptimizerConfig.SpreadOptimizer).
	DefaultInitLogVar  = -6.0
	DefaultDropoutRate = 0.2 // Fischer et al. (2024), Section 3.3.
	DefaultPredBatch   = 256
)

// Options are the model options a user sets: the architecture, the weights' representation and
// the Bayesian layers' settings. They are declared once, here, JSON-tagged: an engine spec's "model"
// object (engine.ModelSpec is this type) decodes into them and Config embeds them. Zero-valued fields
// take defaults: the ones documented below in a Config (New); an engine spec fills its own first
// (architecture mlp, kind bayesian, noise_var 0.5 for regression: engine.Spec.WithDefaults).
type Options struct {
	// Arch is the architecture: ArchMLP, ArchLeNet, ArchCNN3 or ArchResNet20 (required in a Config).
	Arch Arch `json:"arch,omitempty"`
	// Kind is Deterministic (a Config's default), MCDropout or Bayesian.
	Kind Kind `json:"kind,omitempty"`
	// Hidden are the hidden widths of ArchMLP. nil means [100] (Hasan (2023)); an empty non-nil slice
	// means no hidden layer (a linear model).
	Hidden []int `json:"hidden,omitzero"`
	// ConvChannels are the output channels of the convolutions: ArchLeNet default [6, 16], ArchCNN3
	// default [32, 64, 128], ArchResNet20 default [16, 32, 64] (the three stages).
	ConvChannels []int `json:"conv_channels,omitempty"`
	// DenseWidths are ArchLeNet's hidden dense widths, default [120, 84].
	DenseWidths []int `json:"dense_widths,omitempty"`
	// BayesianLayers, for Kind == Bayesian: 0 means every weight layer is Bayesian; n > 0 makes only the
	// last n weight layers (dense or convolution, in forward order) Bayesian and the rest deterministic
	// (the hybrids of Jamoussi et al. (BA-BFL), Section 5).
	BayesianLayers int `json:"bayesian_layers,omitempty"`
	// Estimator of the Bayesian layers: LocalReparam (default), Reparam or Flipout.
	Estimator Estimator `json:"estimator,omitempty"`
	// VarParam is LogVarParam (default) or SoftplusParam.
	VarParam VarParam `json:"var_param,omitempty"`
	// PriorStd is s of the prior N(0, s^2) on every Gaussian weight (default 1; Fischer et al. (2024) use
	// 10, i.e. N(0, 100 I)).
	PriorStd float64 `json:"prior_std,omitempty"`
	// InitLogVar is the initial log sigma^2 of every Gaussian weight (default DefaultInitLogVar, -6), within
	// [LogVarMin, LogVarMax].
	InitLogVar float64 `json:"init_logvar,omitempty"`
	// KLWeight multiplies the KL term of the ELBO (0 means 1).
	KLWeight float64 `json:"kl_weight,omitempty"`
	// DropoutRate is the MC-dropout rate for Kind == MCDropout (default 0.2), in (0, 1).
	DropoutRate float64 `json:"dropout_rate,omitempty"`
	// NoiseVar is the (initial) regression noise variance s_n^2 (a Config's default 1). An engine spec
	// learns it per client (Config.LearnNoise) from this start (default 0.5 on standardised targets,
	// as Hasan's runner); regression only.
	NoiseVar float64 `json:"noise_var,omitempty"`
	// Compat follows a reference implementation instead of the paper's text: CompatNone (default),
	// CompatBFLP ("bfl-p": the model here and aggregate.Options.BFLP in the aggregation) or CompatBABFL
	// ("ba-bfl": aggregate.Options.BABFL); see them for every behaviour they change. An engine spec
	// also accepts "paper" and "none" for the default (ParseCompat).
	Compat Compat `json:"compat,omitempty"`
}

// Config describes a model: the user's Options and what the data and the run fix. Zero-valued fields
// take the documented defaults; New validates the rest and reports the first invalid field by name.
type Config struct {
	// Options are the architecture and weight options (embedded: cfg.Arch, cfg.Kind, ...).
	Options
	// Task is Classification (default) or Regression.
	Task Task
	// InputShape is the shape of one example: [features] for tables, [H, W, C] (channels last) for images.
	// ArchMLP flattens any shape; the convolutional architectures need [H, W, C].
	InputShape []int
	// NumClasses is the number of classes (classification; at least 2).
	NumClasses int
	// PriorVariables keeps the prior of every Gaussian weight in per-parameter variables (initialised to
	// N(0, PriorStd^2)) that SetPrior can replace, for example by the previous round's global posterior
	// (Fischer et al. (2024), Section 3.7).
	PriorVariables bool
	// LearnNoise makes the regression noise variance a learned per-client parameter (initialised to
	// NoiseVar); otherwise NoiseVar is fixed.
	LearnNoise bool

	// Clients is K, the number of independent copies trained in one computation (default 1).
	// Client k behaves exactly like a one-client model with Seed + k.
	Clients int
	// Seed fixes initialisation and sampling noise: same seed, same result.
	Seed int64
	// PredictBatch is the number of examples per compiled prediction call (default 256).
	PredictBatch int
	// DType is the computation and variable type: float32 (default) or float64 (for numerical checks;
	// posteriors are still exchanged in float32).
	DType dtypes.DType
}

// withDefaults returns a copy of c with the documented defaults filled in.
func (c Config) withDefaults() Config {
	if c.Task == "" {
		c.Task = Classification
	}
	if c.Kind == "" {
		c.Kind = Deterministic
	}
	if c.Estimator == "" {
		c.Estimator = LocalReparam
	}
	if c.VarParam == "" {
		c.VarParam = LogVarParam
	}
	if c.PriorStd == 0 {
		c.PriorStd = DefaultPriorStd
	}
	if c.InitLogVar == 0 {
		c.InitLogVar = DefaultInitLogVar
		if c.vblinear() {
			c.InitLogVar = BFLPInitLogVar
		}
	}
	if c.KLWeight == 0 {
		c.KLWeight = 1
	}
	if c.DropoutRate == 0 {
		c.DropoutRate = DefaultDropoutRate
	}
	if c.NoiseVar == 0 {
		c.NoiseVar = 1
	}
	if c.Clients == 0 {
		c.Clients = 1
	}
	if c.PredictBatch == 0 {
		c.PredictBatch = DefaultPredBatch
	}
	if c.DType == dtypes.InvalidDType {
		c.DType = dtypes.Float32
	}
	if c.Task == Regression && c.NumClasses == 0 {
		c.NumClasses = 1
	}
	c.InputShape = append([]int(nil), c.InputShape...)
	switch c.Arch {
	case ArchMLP:
		if c.Hidden == nil {
			c.Hidden = []int{100}
		}
	case ArchLeNet:
		if c.ConvChannels == nil {
			c.ConvChannels = []int{6, 16}
		}
		if c.DenseWidths == nil {
			c.DenseWidths = []int{120, 84}
		}
	case ArchCNN3:
		if c.ConvChannels == nil {
			c.ConvChannels = []int{32, 64, 128}
		}
	case ArchResNet20:
		if c.ConvChannels == nil {
			c.ConvChannels = []int{16, 32, 64}
		}
	}
	return c
}

// ShapeError is the error of a Config whose InputShape the architecture cannot take: a
// convolutional network on examples that are not images [H, W, C], or on images too small for its
// stages (LeNet on 8 x 8 digits). A caller tells it from other Config errors with errors.As, to blame
// the choice of architecture for the data rather than the data.
type ShapeError struct {
	// Arch is the architecture that cannot take the shape.
	Arch Arch
	// Shape is the shape of one example, as Config.InputShape gave it.
	Shape []int
	// Reason says why Arch cannot take Shape.
	Reason string
}

// Error says which shape the architecture cannot take, and why.
func (e *ShapeError) Error() string {
	return fmt.Sprintf("models: Config.InputShape: %v: %s", e.Shape, e.Reason)
}

// Validate checks c, with its defaults filled in, as New does before it builds anything: an invalid
// field is an error naming it, and an InputShape the architecture cannot take is a *ShapeError. It
// builds no network, so a caller can check a configuration (for example against a dataset's example
// shape) without the cost of New.
func (c Config) Validate() error {
	return c.withDefaults().validate()
}

// validate checks a Config that has its defaults filled in.
func (c Config) validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("models: Config.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch c.Arch {
	case ArchMLP, ArchLeNet, ArchCNN3, ArchResNet20:
	case "":
		return bad("Arch", "missing; want one of %q, %q, %q, %q", ArchMLP, ArchLeNet, ArchCNN3, ArchResNet20)
	default:
		return bad("Arch", "unknown architecture %q; want one of %q, %q, %q, %q", c.Arch, ArchMLP, ArchLeNet, ArchCNN3, ArchResNet20)
	}
	switch c.Task {
	case Classification:
		if c.NumClasses < 2 {
			return bad("NumClasses", "%d; a classifier needs at least 2 classes", c.NumClasses)
		}
	case Regression:
		if c.NumClasses != 1 {
			return bad("NumClasses", "%d for a regression model; leave it 0 (one output)", c.NumClasses)
		}
	default:
		return bad("Task", "unknown task %q; want %q or %q", c.Task, Classification, Regression)
	}
	if len(c.InputShape) == 0 {
		return bad("InputShape", "missing")
	}
	for i, d := range c.InputShape {
		if d <= 0 {
			return bad("InputShape", "dimension %d is %d; dimensions must be positive", i, d)
		}
	}
	checkWidths := func(field string, ws []int, atLeastOne bool) error {
		if atLeastOne && len(ws) == 0 {
			return bad(field, "empty")
		}
		for i, w := range ws {
			if w <= 0 {
				return bad(field, "entry %d is %d; widths must be positive", i, w)
			}
		}
		return nil
	}
	switch c.Arch {
	case ArchMLP:
		if err := checkWidths("Hidden", c.Hidden, false); err != nil {
			return err
		}
	case ArchLeNet, ArchCNN3, ArchResNet20:
		if len(c.InputShape) != 3 {
			return &ShapeError{Arch: c.Arch, Shape: c.InputShape, Reason: fmt.Sprintf("%s needs an image shape [H, W, C]", c.Arch)}
		}
		if err := checkWidths("ConvChannels", c.ConvChannels, true); err != nil {
			return err
		}
		if c.Arch == ArchLeNet {
			if err := checkWidths("DenseWidths", c.DenseWidths, false); err != nil {
				return err
			}
		}
		if c.Arch == ArchResNet20 && len(c.ConvChannels) != 3 {
			return bad("ConvChannels", "%v; ResNet-20 has exactly 3 stages", c.ConvChannels)
		}
		h, w := c.InputShape[0], c.InputShape[1]
		for i := range c.ConvChannels {
			switch c.Arch {
			case ArchLeNet: // 5x5 valid convolution, then 2x2 pooling.
				h, w = (h-4)/2, (w-4)/2
			case ArchCNN3: // same convolution, 2x2 pooling.
				h, w = h/2, w/2
			case ArchResNet20: // stride 2 at the start of stages 2 and 3.
				if i > 0 {
					h, w = (h+1)/2, (w+1)/2
				}
			}
			if h < 1 || w < 1 {
				return &ShapeError{Arch: c.Arch, Shape: c.InputShape, Reason: fmt.Sprintf("too small for %s with %d convolution stages", c.Arch, len(c.ConvChannels))}
			}
		}
	}
	switch c.Kind {
	case Deterministic, MCDropout, Bayesian:
	default:
		return bad("Kind", "unknown kind %q; want %q, %q or %q", c.Kind, Deterministic, MCDropout, Bayesian)
	}
	if n := numWeightLayers(c); c.BayesianLayers < 0 || c.BayesianLayers > n {
		return bad("BayesianLayers", "%d; %s has %d weight layers (0 means all)", c.BayesianLayers, c.Arch, n)
	}
	if c.BayesianLayers != 0 && c.Kind != Bayesian {
		return bad("BayesianLayers", "%d is set but Kind is %q, not %q", c.BayesianLayers, c.Kind, Bayesian)
	}
	switch c.Estimator {
	case Reparam, LocalReparam, Flipout:
	default:
		return bad("Estimator", "unknown estimator %q; want %q, %q or %q", c.Estimator, Reparam, LocalReparam, Flipout)
	}
	switch c.VarParam {
	case LogVarParam, SoftplusParam:
	default:
		return bad("VarParam", "unknown parameterisation %q; want %q or %q", c.VarParam, LogVarParam, SoftplusParam)
	}
	if !(c.PriorStd > 0) || math.IsInf(c.PriorStd, 0) {
		return bad("PriorStd", "%v; must be positive and finite", c.PriorStd)
	}
	if !(c.InitLogVar >= LogVarMin && c.InitLogVar <= LogVarMax) {
		return bad("InitLogVar", "%v outside the clamp range [%v, %v]", c.InitLogVar, LogVarMin, LogVarMax)
	}
	if !(c.KLWeight > 0) || math.IsInf(c.KLWeight, 0) {
		return bad("KLWeight", "%v; must be positive and finite", c.KLWeight)
	}
	if !(c.DropoutRate > 0 && c.DropoutRate < 1) {
		return bad("DropoutRate", "%v; must be in (0, 1)", c.DropoutRate)
	}
	if !(c.NoiseVar > 0) || math.IsInf(c.NoiseVar, 0) {
		return bad("NoiseVar", "%v; must be positive and finite", c.NoiseVar)
	}
	if c.Task != Regression && c.LearnNoise {
		return bad("LearnNoise", "set on a %s model; it applies to regression only", c.Task)
	}
	if c.Clients < 1 {
		return bad("Clients", "%d; must be at least 1", c.Clients)
	}
	if c.PredictBatch < 1 {
		return bad("PredictBatch", "%d; must be at least 1", c.PredictBatch)
	}
	if c.DType != dtypes.Float32 && c.DType != dtypes.Float64 {
		return bad("DType", "%s; want float32 or float64", c.DType)
	}
	switch c.Compat {
	case CompatNone:
	case CompatBFLP, CompatBABFL:
		if c.VarParam != LogVarParam {
			return bad("Compat", "%q needs VarParam %q (BFL-P trains log sigma^2), got %q", c.Compat, LogVarParam, c.VarParam)
		}
	default:
		return bad("Compat", "unknown compatibility mode %q; want %q (default), %q or %q", c.Compat, CompatNone, CompatBFLP, CompatBABFL)
	}
	return nil
}

// numWeightLayers counts the dense and convolution layers of the architecture, in forward order.
func numWeightLayers(c Config) int {
	switch c.Arch {
	case ArchMLP:
		return len(c.Hidden) + 1
	case ArchLeNet:
		return len(c.ConvChannels) + len(c.DenseWidths) + 1
	case ArchCNN3:
		return len(c.ConvChannels) + 1
	case ArchResNet20:
		// Stem, 3 stages x 3 blocks x 2 convolutions, 2 projection shortcuts, dense.
		return 1 + 18 + 2 + 1
	}
	return 0
}

// AsDeterministic returns c as a deterministic network of the same architecture and shapes: Kind
// Deterministic, no Bayesian layers. The parameter means of a Bayesian or MC-dropout net load into it
// (the ensembles and distillation students of package predictive).
func (c Config) AsDeterministic() Config {
	c.Kind, c.BayesianLayers = Deterministic, 0
	return c
}
