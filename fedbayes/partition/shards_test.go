package partition

import (
	"strings"
	"testing"
)

// TestShardsFischer2Class reproduces the 2-class case of Fischer et al. (2024), Sec. 3.1 at
// CIFAR-10 scale: 50,000 labels, 10 clients, 20 shards of 2,500, two classes per client, 2,500
// examples of each.
func TestShardsFischer2Class(t *testing.T) {
	labels := balancedLabels(50000, 10, 5)
	p, err := Shards(labels, 10, 10, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 50000, 10, 0)
	for k, row := range p.Counts {
		var held []int
		for c, n := range row {
			if n != 0 {
				if n != 2500 {
					t.Errorf("client %d has %d examples of class %d, want 2500", k, n, c)
				}
				held = append(held, c)
			}
		}
		if len(held) != 2 {
			t.Errorf("client %d holds classes %v, want 2 distinct", k, held)
		}
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return Shards(labels, 10, 10, 2, seed) })
}

func TestShardsLeftover(t *testing.T) {
	// 103 examples, 5 clients x 2 shards: shards of 10, 3 examples unused.
	labels := balancedLabels(103, 5, 6)
	p, err := Shards(labels, 5, 5, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 103, 5, 3)
	for k, s := range p.Sizes() {
		if s != 20 {
			t.Errorf("client %d has %d examples, want 20", k, s)
		}
	}
}

func TestShardsImpossibleFailsClearly(t *testing.T) {
	// Two classes but three shards per client of distinct classes.
	labels := balancedLabels(120, 2, 7)
	_, err := Shards(labels, 2, 4, 3, 1)
	if err == nil || !strings.Contains(err.Error(), "cover only 2 classes") {
		t.Errorf("error %v", err)
	}
	// Class 0 makes up 90% of the data: no way to give 5 clients 2 shards of distinct classes.
	skewed := make([]int32, 100)
	for i := 90; i < 100; i++ {
		skewed[i] = 1
	}
	_, err = Shards(skewed, 2, 5, 2, 1)
	if err == nil || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("skewed: error %v", err)
	}
}

func TestClassesPerClient(t *testing.T) {
	labels := balancedLabels(6000, 10, 8)
	for _, tc := range []struct{ clients, k int }{{10, 2}, {10, 1}, {20, 3}, {5, 10}} {
		p, err := ClassesPerClient(labels, 10, tc.clients, tc.k, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, 6000, tc.clients, 0)
		holders := make([]int, 10)
		for i, row := range p.Counts {
			held := 0
			for c, n := range row {
				if n > 0 {
					held++
					holders[c]++
				}
			}
			if held != tc.k || row[i%10] == 0 {
				t.Errorf("%+v: client %d holds %d classes (row %v), want %d including class %d", tc, i, held, row, tc.k, i%10)
			}
		}
		for i, row := range p.Counts { // a class is split evenly among its holders
			for c, n := range row {
				if n > 0 && (n < 600/holders[c] || n > 600/holders[c]+1) {
					t.Errorf("%+v: client %d has %d of class %d held by %d clients", tc, i, n, c, holders[c])
				}
			}
		}
	}
	// Fewer clients x k than classes: the undrawn classes are left out.
	p, err := ClassesPerClient(labels, 10, 3, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 6000, 3, 4200)
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return ClassesPerClient(labels, 10, 10, 2, seed) })
}
