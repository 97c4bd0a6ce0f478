package partition

import "testing"

// The target: loading and partitioning Fashion-MNIST (60,000 labels) for 100 clients in
// under 2 s. These benchmarks time the partitioning part.

func BenchmarkIID60kClients100(b *testing.B) {
	labels := balancedLabels(60000, 10, 1)
	b.ResetTimer()
	for i := range b.N {
		if _, err := IID(labels, 10, 100, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirichlet60kClients100(b *testing.B) {
	labels := balancedLabels(60000, 10, 1)
	for _, alpha := range []float64{0.5, 0.1} {
		b.Run(map[float64]string{0.5: "alpha0.5", 0.1: "alpha0.1"}[alpha], func(b *testing.B) {
			attempts := 0
			for i := range b.N {
				p, err := Dirichlet(labels, 10, 100, DirichletOptions{Alpha: alpha, MinSize: DefaultDirichletMinSize, Seed: uint64(i)})
				if err != nil {
					b.Fatal(err)
				}
				attempts += p.Attempts
			}
			b.ReportMetric(float64(attempts)/float64(b.N), "attempts/op")
		})
	}
}
