// Package stats holds the summary of a metric over seeds (Summarize: mean and standard error) and
// the significance tests fedbayes uses to compare methods over seeds: Student's
// paired t-test on the differences of matched seeds, Welch's unequal-variance t-test, Holm's step-down
// correction for a family of comparisons, and the two one-sided tests (TOST) for equivalence within a
// stated margin. Compare and Equivalence pick the paired test when both samples hold the same seeds
// (runs of one preset share each seed's partition, initial model and batch order, engine/seeds.go)
// and Welch's test otherwise, and say which they used.
//
// Distributions come from gonum (gonum.org/v1/gonum/stat/distuv); the package depends on no other
// fedbayes package.
//
// Sources:
//   - Student (1908), The probable error of a mean, Biometrika 6(1): 1-25 (the t distribution, the
//     paired test on differences).
//   - Welch (1947), The generalization of "Student's" problem when several different population
//     variances are involved, Biometrika 34(1-2): 28-35 (the unequal-variance test and its
//     Welch-Satterthwaite degrees of freedom).
//   - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of
//     Statistics 6(2): 65-70.
//   - Schuirmann (1987), A comparison of the two one-sided tests procedure and the power approach for
//     assessing the equivalence of average bioavailability, Journal of Pharmacokinetics and
//     Biopharmaceutics 15(6): 657-680.
//   - Lakens (2017), Equivalence tests: a practical primer for t tests, correlations, and
//     meta-analyses, Social Psychological and Personality Science 8(4): 355-362.
//
// docs/statistics.md describes the tests, the level and the margins the tables and the reproduction
// report use, with the A/A simulation's results.
package stats
