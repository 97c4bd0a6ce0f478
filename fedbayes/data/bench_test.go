package data

import (
	"path/filepath"
	"testing"
)

// BenchmarkLoadFashionMNIST loads the installed Fashion-MNIST (60,000 + 10,000 images from the
// gzip IDX files) from Dir(); skipped when it is not installed. Target (issue 6): loading plus
// partitioning for 100 clients under 2 s.
func BenchmarkLoadFashionMNIST(b *testing.B) {
	dir := Dir()
	if _, err := findFile([]string{filepath.Join(dir, "fashion-mnist")}, "train-images-idx3-ubyte"); err != nil {
		b.Skipf("Fashion-MNIST not installed in %s (run `fedbayes data install`)", dir)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		train, test, err := LoadFashionMNIST(dir)
		if err != nil {
			b.Fatal(err)
		}
		if train.Len() != 60000 || test.Len() != 10000 {
			b.Fatalf("loaded %d + %d images", train.Len(), test.Len())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
}

// BenchmarkSplitServer measures setting aside 20% of a 60,000-example training set for the server.
func BenchmarkSplitServer(b *testing.B) {
	per := make([]int, 10)
	for i := range per {
		per[i] = 6000
	}
	d := classificationSet(per...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := SplitServer(d, 0.2, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
