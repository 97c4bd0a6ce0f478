package metrics

import (
	"math"
	"sort"
)

// AUROC is the area under the ROC curve of telling pos from neg by score (higher scores mean
// "positive"): the probability that a randomly chosen positive scores higher than a randomly chosen
// negative, a tie counting one half. It is computed as the Mann-Whitney U statistic of pos divided by
// |pos| |neg| (Hanley and McNeil (1982), "The meaning and use of the area under a receiver operating
// characteristic (ROC) curve", Radiology 143(1), Eq. 1 and Table 1; Fawcett (2006), "An introduction
// to ROC analysis", Pattern Recognition Letters 27(8), Sec. 7): with R the sum of the ranks of the
// positives in the pooled sample (ties given their average rank),
//
//	AUROC = (R − |pos|(|pos|+1)/2) / (|pos| |neg|).
//
// 1 separates the sets perfectly, 0.5 cannot tell them apart, 0 ranks every negative above every
// positive. The area is undefined, and AUROC returns NaN, when either set is empty (every input of
// one class) or when any score is NaN. The inputs are not modified; time O((|pos|+|neg|) log).
func AUROC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	type item struct {
		v   float64
		pos bool
	}
	all := make([]item, 0, len(pos)+len(neg))
	for _, v := range pos {
		if math.IsNaN(v) {
			return math.NaN()
		}
		all = append(all, item{v, true})
	}
	for _, v := range neg {
		if math.IsNaN(v) {
			return math.NaN()
		}
		all = append(all, item{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	rankSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1 .. j, averaged
		for k := i; k < j; k++ {
			if all[k].pos {
				rankSum += avg
			}
		}
		i = j
	}
	np, nn := float64(len(pos)), float64(len(neg))
	return (rankSum - np*(np+1)/2) / (np * nn)
}
