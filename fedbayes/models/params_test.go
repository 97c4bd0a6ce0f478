package models

import (
	"testing"
)

// TestParamCounts checks parameter counts against hand counts, and that a Bayesian layer has twice the
// parameters of its deterministic version (Ozer et al. (2022), appendix).
func TestParamCounts(t *testing.T) {
	// LeNet on 32x32x3: conv 3->6 (456), conv 6->16 (2416), dense 400->120 (48120), 120->84 (10164),
	// 84->10 (850).
	lenetDense := 48120 + 10164 + 850
	// ResNet-20 with 1x1 projection shortcuts and batch norm (scale and offset: 1376 in all).
	const resnetBN = 2 * (16 + 6*16 + 6*32 + 6*64)
	tests := []struct {
		name         string
		cfg          Config
		det, bayes   int // Kind Deterministic, Kind Bayesian (all layers)
		hybrid, last int // Kind Bayesian with BayesianLayers = last
	}{
		{"mlp 784-100-10", Config{Options: Options{Arch: ArchMLP}, InputShape: []int{28, 28, 1}, NumClasses: 10}, 79510, 2 * 79510, 79510 + 1010, 1},
		{"lenet 32x32x3", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{32, 32, 3}, NumClasses: 10}, 62006, 2 * 62006, 62006 + lenetDense, 3},
		{"lenet 28x28x1", Config{Options: Options{Arch: ArchLeNet}, InputShape: []int{28, 28, 1}, NumClasses: 10}, 44426, 2 * 44426, 44426 + 850, 1},
		{"cnn3 32x32x3", Config{Options: Options{Arch: ArchCNN3}, InputShape: []int{32, 32, 3}, NumClasses: 10},
			896 + 18496 + 73856 + 20490, 2 * (896 + 18496 + 73856 + 20490), 896 + 18496 + 73856 + 2*20490, 1},
		{"resnet20", Config{Options: Options{Arch: ArchResNet20}, InputShape: []int{32, 32, 3}, NumClasses: 10}, 273066, 2*273066 - resnetBN, 273066 + 650, 1},
	}
	for _, tc := range tests {
		for _, variant := range []struct {
			kind   Kind
			layers int
			want   int
		}{{Deterministic, 0, tc.det}, {MCDropout, 0, tc.det}, {Bayesian, 0, tc.bayes}, {Bayesian, tc.last, tc.hybrid}} {
			cfg := tc.cfg
			cfg.Kind, cfg.BayesianLayers = variant.kind, variant.layers
			if got := newModel(t, cfg).NumParams(); got != variant.want {
				t.Errorf("%s %s (last %d Bayesian): %d parameters, want %d", tc.name, variant.kind, variant.layers, got, variant.want)
			}
		}
	}
}
