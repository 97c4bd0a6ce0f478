package aggregate

import (
	"math"
	"strings"
	"testing"
)

// TestSitesHandComputed checks the site arithmetic on a two-client, two-parameter case computed by
// hand: prior N(0, 1) per parameter; sites of precision (1, 3) and (2, -0.5) with shifts (2, 3) and
// (-1, 1); global precision (4, 3.5), shift (1, 4), so mean (0.25, 8/7), variance (0.25, 2/7).
func TestSitesHandComputed(t *testing.T) {
	prior, err := NaturalOf([]float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	s1 := Natural{Prec: []float64{1, 3}, Shift: []float64{2, 3}}
	s2 := Natural{Prec: []float64{2, -0.5}, Shift: []float64{-1, 1}}
	q, err := Product(prior, []Natural{s1, s2})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-15*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	near("global precision", q.Prec, []float64{4, 3.5})
	near("global shift", q.Shift, []float64{1, 4})
	m, v, err := q.Moments()
	if err != nil {
		t.Fatal(err)
	}
	near("global mean", m, []float64{0.25, 8.0 / 7})
	near("global variance", v, []float64{0.25, 2.0 / 7})

	// Client 1's cavity is the prior times site 2: precision (3, 0.5), shift (-1, 1).
	c, err := Cavity(q, s1, 0)
	if err != nil {
		t.Fatal(err)
	}
	near("cavity precision", c.Prec, []float64{3, 0.5})
	near("cavity shift", c.Shift, []float64{-1, 1})
	// A local approximation N((0.5, 1), (0.2, 0.5)) has precision (5, 2), shift (2.5, 2): its site is
	// (2, 1.5), (3.5, 1).
	local, err := NaturalOf([]float64{0.5, 1}, []float64{0.2, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	site, err := SiteFrom(local, c)
	if err != nil {
		t.Fatal(err)
	}
	near("new site precision", site.Prec, []float64{2, 1.5})
	near("new site shift", site.Shift, []float64{3.5, 1})
	// Damped at 0.25 from s1: 0.75 (1, 3) + 0.25 (2, 1.5) = (1.25, 2.625); shifts (2.375, 2.5).
	d, err := Damp(s1, site, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	near("damped precision", d.Prec, []float64{1.25, 2.625})
	near("damped shift", d.Shift, []float64{2.375, 2.5})
	// Undamped, the site replaces the old one: cavity times the new site is the local approximation.
	full, err := Damp(s1, site, 1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Product(c, []Natural{full})
	if err != nil {
		t.Fatal(err)
	}
	near("cavity x site precision", back.Prec, local.Prec)
	near("cavity x site shift", back.Shift, local.Shift)
}

// TestSitesRefuse checks that every operation refuses what is no Gaussian or does not fit, naming the
// client and the parameter, and never clamps.
func TestSitesRefuse(t *testing.T) {
	q := Natural{Prec: []float64{2, 1}, Shift: []float64{0, 0}}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"cavity without precision", "client 3: parameter 1: cavity precision 0", func() error {
			_, err := Cavity(q, Natural{Prec: []float64{1, 1}, Shift: []float64{0, 0}}, 3)
			return err
		}()},
		{"cavity of another length", "client 0's cavity: a factor of 1 precisions", func() error {
			_, err := Cavity(q, NewNatural(1), 0)
			return err
		}()},
		{"moments of a negative precision", "parameter 0: precision -1", func() error {
			_, _, err := Natural{Prec: []float64{-1}, Shift: []float64{0}}.Moments()
			return err
		}()},
		{"a zero variance", "parameter 1: mean 0, variance 0", func() error {
			_, err := NaturalOf([]float64{0, 0}, []float64{1, 0})
			return err
		}()},
		{"a NaN mean", "parameter 0: mean NaN", func() error {
			_, err := NaturalOf([]float64{math.NaN()}, []float64{1})
			return err
		}()},
		{"damping 0", "damping 0", func() error {
			_, err := Damp(q, q, 0)
			return err
		}()},
		{"damping above 1", "damping 1.5", func() error {
			_, err := Damp(q, q, 1.5)
			return err
		}()},
		{"a site of another length", "site 1 against the prior: a factor of 1 precisions", func() error {
			_, err := Product(q, []Natural{q, NewNatural(1)})
			return err
		}()},
		{"shifts and precisions of different lengths", "a factor of 2 precisions and 1 shifts", func() error {
			_, err := Cavity(q, Natural{Prec: []float64{1, 0}, Shift: []float64{0}}, 2)
			return err
		}()},
		{"a prior of mismatched lengths", "the prior: a factor of 1 precisions and 2 shifts", func() error {
			_, err := Product(Natural{Prec: []float64{1}, Shift: []float64{0, 0}}, nil)
			return err
		}()},
		{"a site of mismatched lengths", "a new site: a factor of 2 precisions and 0 shifts", func() error {
			_, err := SiteFrom(Natural{Prec: []float64{1, 1}}, q)
			return err
		}()},
		{"damping mismatched lengths", "damping a site: a factor of 1 precisions", func() error {
			_, err := Damp(q, NewNatural(1), 0.5)
			return err
		}()},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}
