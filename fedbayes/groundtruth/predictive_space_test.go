package groundtruth

import (
	"math"
	"testing"
)

// TestGroundTruthPredictiveSpace checks the glue to package predictive: with one client, the BCM,
// the mixture and beta-PredBayes are all the client's predictive, which is the exact one (KL 0,
// the exact NLL); with several, beta lies in [0, 1] and the BCM, which counts the noise K times, is
// narrower than the exact predictive and the mixture wider.
func TestGroundTruthPredictiveSpace(t *testing.T) {
	for _, K := range []int{1, 10} {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Dims, cfg.Test = K, 3, 300
		res, err := Run(cfg, RuleOptions{PredictiveSpace: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.PredictiveRules) != 3 {
			t.Fatalf("K = %d: %d predictive-space methods", K, len(res.PredictiveRules))
		}
		for _, q := range res.PredictiveRules {
			if q.Beta < 0 || q.Beta > 1 {
				t.Errorf("K = %d: %s: beta %v", K, q.Label, q.Beta)
			}
			if K == 1 && (q.KLToTruth > 1e-9 || q.KLFromTruth > 1e-9 || math.Abs(q.Predictive.NLL-res.ExactPredictive.NLL) > 1e-6) {
				t.Errorf("one client: %s differs from the exact predictive: %+v (exact NLL %v)", q.Label, q, res.ExactPredictive.NLL)
			}
		}
		if K > 1 {
			bcm, mix := res.PredictiveRules[0], res.PredictiveRules[1]
			if bcm.Label != LabelBCM || bcm.VarRatio >= 1 || mix.Label != LabelMixture || mix.VarRatio <= 1 {
				t.Errorf("K = %d: BCM %s var ratio %v (want < 1), mixture %s %v (want > 1)", K, bcm.Label, bcm.VarRatio, mix.Label, mix.VarRatio)
			}
		}
	}
}
