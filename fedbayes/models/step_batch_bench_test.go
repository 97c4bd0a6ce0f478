package models

import "testing"

// BenchmarkStepB1024 is BenchmarkStep of the papers' four networks at batch 1,024: on an accelerator a
// batch of 64 leaves most of the device idle, so kernels/gpu-check times both. kernels/bench-torch.py
// prints the same names with `--batch 1024`.
//
//	go test ./fedbayes/models -run '^$' -bench StepB1024 -benchtime=20x -count=3
func BenchmarkStepB1024(b *testing.B) {
	for _, c := range paperNetworks() {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg
			cfg.NumClasses, cfg.Clients = 10, 1
			benchSteps(b, cfg, 1024)
		})
	}
}
