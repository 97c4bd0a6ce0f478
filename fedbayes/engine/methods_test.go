package engine

import (
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/strategy"
)

// TestMethodAliases checks the alias table: every former name maps to a registered strategy that is
// not itself an alias, and Method reads former names, registry names and their case alike.
func TestMethodAliases(t *testing.T) {
	for old, m := range MethodAliases {
		if !strategy.Known(m) || strategy.Known(old) {
			t.Errorf("alias %q -> %q: want a former name that is no strategy, for a registered strategy", old, m)
		}
		if _, ok := MethodAliases[m]; ok {
			t.Errorf("alias %q -> %q: the target is an alias too", old, m)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"oneshot", "oneshotfl"}, {" Oneshot ", "oneshotfl"}, {"fedbe", "fedbe-gaussian"}, {"FedAvg", "fedavg"},
		{"fedbe-dirichlet", "fedbe-dirichlet"}, {"bcm", "bcm"}, {"d-beta-predbayes", "d-beta-predbayes"},
	} {
		if got := Method(tc.in); got != tc.want {
			t.Errorf("Method(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseMethods reads a method list through the alias table and refuses unknown, empty and
// repeated methods.
func TestParseMethods(t *testing.T) {
	got, err := ParseMethods("fedavg, oneshot,fedbe-dirichlet,bcm")
	if want := []string{"fedavg", "oneshotfl", "fedbe-dirichlet", "bcm"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseMethods = %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"bcm,median", `method "median": no strategy`},
		{" , ", "no method"},
		{"oneshotfl,oneshot", `method "oneshot": the same method as "oneshotfl"`},
	} {
		if _, err := ParseMethods(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseMethods(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestSelectMethodsLiteral: SelectMethods keeps, in the spec's order and with their labels, the
// variants whose strategy (their aggregation.rule, else the spec's) is one of the methods asked for by
// registry or former name, and refuses a method no variant runs, a spec without variants and a
// variant whose rule is not a string. (Package presets checks it on Hasan's digits-fast preset.)
func TestSelectMethodsLiteral(t *testing.T) {
	spec := func() *Spec {
		return &Spec{Name: "m", Aggregation: AggregationSpec{Rule: "FedAvg"}, Variants: []Variant{
			variant("base"), // the spec's rule: FedAvg
			variant("fedbe", "aggregation.rule", "fedbe-gaussian"),
			variant("oneshot", "aggregation.rule", "oneshotfl"),
			variant("bcm", "aggregation.rule", "bcm"),
		}}
	}
	for _, tc := range []struct {
		name    string
		methods []string
		modify  func(*Spec)
		want    []string
		err     string
	}{
		{"registry and former names", []string{"bcm", "fedbe", "FedAvg"}, nil, []string{"base", "fedbe", "bcm"}, ""},
		{"one method", []string{"oneshot"}, nil, []string{"oneshot"}, ""},
		{"a method no variant runs", []string{"mixture"}, nil, nil, `runs no method "mixture"`},
		{"no variants", []string{"fedavg"}, func(s *Spec) { s.Variants = nil }, nil, "no variants"},
		{"a rule that is no string", []string{"fedavg"}, func(s *Spec) { s.Variants[1].Set["aggregation.rule"] = raw(3) }, nil, `variant "fedbe": aggregation.rule`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			if tc.modify != nil {
				tc.modify(s)
			}
			err := SelectMethods(s, tc.methods)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, v := range s.Variants {
				labels = append(labels, v.Label)
			}
			if !slices.Equal(labels, tc.want) {
				t.Errorf("variants %v, want %v", labels, tc.want)
			}
		})
	}
}
