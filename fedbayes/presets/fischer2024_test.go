package presets

import (
	"testing"

	"fedbayes.dev/fedbayes/models"
)

// TestFischerDWCGlobalPrior checks the global-prior Table 4 presets against the fixed-prior ones they
// are cut from: the same rows, partitions, seeds and budget, with the clients' prior the previous
// global posterior and every parameter on the means' SGD, at the full, medium and reduced budgets.
func TestFischerDWCGlobalPrior(t *testing.T) {
	for _, d := range []string{"fmnist", "cifar10"} {
		for _, suffix := range []string{"", MediumSuffix, ReducedSuffix} {
			base := "fischer2024-" + d + "-dwc"
			_, fixed := expandPreset(t, base+suffix)
			s, global := expandPreset(t, base+GlobalPriorSuffix+suffix)
			if s.Name != base+GlobalPriorSuffix+suffix {
				t.Errorf("%s: spec named %s", base+GlobalPriorSuffix+suffix, s.Name)
			}
			if len(global) != len(fixed) {
				t.Fatalf("%s%s: %d settings, the fixed-prior preset %d", base, suffix, len(global), len(fixed))
			}
			for i, g := range global {
				f := fixed[i]
				gt, ft := g.Spec.Training, f.Spec.Training
				if gt.Prior != "previous-global" || gt.VarianceOptimizer != "" || gt.Optimizer != "sgd" {
					t.Errorf("%s: prior %q, variance optimizer %q, optimizer %q; want previous-global, none (the means' SGD), sgd", g.Name, gt.Prior, gt.VarianceOptimizer, gt.Optimizer)
				}
				if ft.Prior != "fixed" || ft.VarianceOptimizer != string(models.Adam) {
					t.Errorf("%s: the fixed-prior preset changed: prior %q, variance optimizer %q", f.Name, ft.Prior, ft.VarianceOptimizer)
				}
				if g.Labels["variant"] != f.Labels["variant"] || g.Labels["partition"] != f.Labels["partition"] ||
					gt.Rounds != ft.Rounds || gt.LocalEpochs != ft.LocalEpochs || gt.LearningRate != ft.LearningRate ||
					g.Spec.Aggregation.Rule != f.Spec.Aggregation.Rule || g.Spec.Dataset != f.Spec.Dataset || len(g.Spec.Seeds) != len(f.Spec.Seeds) {
					t.Errorf("%s differs from %s beyond the prior and the variance optimizer: %v %+v against %v %+v", g.Name, f.Name, g.Labels, gt, f.Labels, ft)
				}
			}
		}
	}
	_, med := expandPreset(t, "fischer2024-fmnist-dwc"+GlobalPriorSuffix+MediumSuffix)
	if len(med) != 6 || med[0].Spec.Training.LocalEpochs != 40 || len(med[0].Spec.Seeds) != 3 || med[0].Spec.Model.Arch != models.ArchMLP {
		t.Errorf("medium global-prior preset: %d settings, E = %d, seeds %v, arch %s; want 6 (3 rows x IID, 2-class), 40, 3 seeds, mlp",
			len(med), med[0].Spec.Training.LocalEpochs, med[0].Spec.Seeds, med[0].Spec.Model.Arch)
	}
}
