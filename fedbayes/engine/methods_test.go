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
