package predictive

import (
	"strings"
	"testing"
)

// TestMomentumDefaults: a momentum of 0 means none wherever the optimizer is named (local training,
// distillation, FedBE's distillation), as in engine.TrainingSpec; only a config that leaves the
// optimizer out takes the default optimizer with its momentum (SGD with 0.9 for local training and
// FedBE, Adam for distillation).
func TestMomentumDefaults(t *testing.T) {
	tests := []struct {
		name          string
		got           func() (string, float64)
		wantOptimizer string
		wantMomentum  float64
	}{
		{"local, nothing given", func() (string, float64) { c := LocalConfig{}.WithDefaults(); return c.Optimizer, c.Momentum }, "sgd", DefaultMomentum},
		{"local, momentum only", func() (string, float64) {
			c := LocalConfig{Momentum: 0.5}.WithDefaults()
			return c.Optimizer, c.Momentum
		}, "sgd", 0.5},
		{"local, sgd named", func() (string, float64) {
			c := LocalConfig{Optimizer: "sgd"}.WithDefaults()
			return c.Optimizer, c.Momentum
		}, "sgd", 0},
		{"local, sgd with momentum", func() (string, float64) {
			c := LocalConfig{Optimizer: "sgd", Momentum: 0.3}.WithDefaults()
			return c.Optimizer, c.Momentum
		}, "sgd", 0.3},
		{"local, adam", func() (string, float64) {
			c := LocalConfig{Optimizer: "adam"}.WithDefaults()
			return c.Optimizer, c.Momentum
		}, "adam", 0},
		{"distill, nothing given", func() (string, float64) { c := DistillConfig{}.WithDefaults(); return c.Optimizer, c.Momentum }, "adam", 0},
		{"distill, sgd named", func() (string, float64) {
			c := DistillConfig{Optimizer: "sgd"}.WithDefaults()
			return c.Optimizer, c.Momentum
		}, "sgd", 0},
		{"fedbe, nothing given", func() (string, float64) {
			c := FedBEConfig{}.WithDefaults().Distill
			return c.Optimizer, c.Momentum
		}, "sgd", DefaultMomentum},
		{"fedbe, sgd named", func() (string, float64) {
			c := FedBEConfig{Distill: DistillConfig{Optimizer: "sgd"}}.WithDefaults().Distill
			return c.Optimizer, c.Momentum
		}, "sgd", 0},
		{"fedkt, local sgd named", func() (string, float64) {
			c := FedKTConfig{Local: LocalConfig{Optimizer: "sgd", Epochs: 2}}.WithDefaults().Local
			return c.Optimizer, c.Momentum
		}, "sgd", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, m := tt.got()
			if o != tt.wantOptimizer || m != tt.wantMomentum {
				t.Errorf("optimizer %q, momentum %v; want %q, %v", o, m, tt.wantOptimizer, tt.wantMomentum)
			}
		})
	}
}

// TestOptimizerConfig: the one conversion of LocalConfig's and DistillConfig's optimizer into
// models.OptimizerConfig keeps the momentum as given and refuses what no optimizer takes.
func TestOptimizerConfig(t *testing.T) {
	tests := []struct {
		name, kind string
		momentum   float64
		wantErr    string
	}{
		{"sgd without momentum", "sgd", 0, ""},
		{"sgd with momentum", "sgd", 0.9, ""},
		{"adam", "adam", 0, ""},
		{"momentum 1", "sgd", 1, "momentum 1; want in [0, 1)"},
		{"negative momentum", "sgd", -0.1, "momentum -0.1; want in [0, 1)"},
		{"adam with momentum", "adam", 0.9, "momentum applies to sgd"},
		{"unknown optimizer", "lbfgs", 0, `optimizer "lbfgs"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oc, err := optimizerConfig("LocalConfig", tt.kind, 0.01, tt.momentum)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(oc.Kind) != tt.kind || oc.Momentum != tt.momentum || oc.LearningRate != 0.01 {
				t.Errorf("config %+v; want %s at 0.01 with momentum %v", oc, tt.kind, tt.momentum)
			}
		})
	}
}
