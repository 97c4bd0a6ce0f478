package strategy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
)

// TestCountOptionBounds checks every count option of every strategy that takes one against its
// stated range: the bound itself is accepted, one more (and 2^31 - 1, and -1) is refused naming the
// field and the range, before anything is built.
func TestCountOptionBounds(t *testing.T) {
	base := Settings{Kind: models.Deterministic, HasServer: true, Clients: 2, MaxNetworks: 100_000}
	sampling := base
	sampling.Sampling, sampling.PriorStd = true, 1
	distilling := []struct {
		rule string
		s    Settings
	}{{FedBEGaussian, base}, {FedBEDirichlet, base}, {FedBENoSWA, base}, {OneshotFLName, base}, {FedKTName, base},
		{DBCM, sampling}, {DBetaPredBayes, sampling}}
	type count struct {
		rule    string
		s       Settings
		field   string           // under aggregation.options
		max     int              // the stated bound
		options func(int) string // the options with the count set
	}
	var counts []count
	for _, d := range distilling {
		counts = append(counts,
			count{d.rule, d.s, "distill.epochs", MaxOptionEpochs, func(v int) string { return fmt.Sprintf(`{"distill": {"epochs": %d}}`, v) }},
			count{d.rule, d.s, "distill.batch_size", MaxOptionBatch, func(v int) string { return fmt.Sprintf(`{"distill": {"batch_size": %d}}`, v) }},
			count{d.rule, d.s, "distill.swa_cycles", MaxOptionEpochs, func(v int) string {
				return fmt.Sprintf(`{"distill": {"epochs": %d, "swa_cycles": %d}}`, min(max(v, 1), MaxOptionEpochs), v)
			}})
	}
	for _, rule := range []string{FedBEGaussian, FedBEDirichlet, FedBENoSWA} {
		counts = append(counts, count{rule, base, "samples", MaxFedBESamples, func(v int) string { return fmt.Sprintf(`{"samples": %d}`, v) }})
	}
	counts = append(counts,
		count{FedKTName, base, "local.epochs", MaxOptionEpochs, func(v int) string { return fmt.Sprintf(`{"local": {"epochs": %d}}`, v) }},
		count{FedKTName, base, "local.batch_size", MaxOptionBatch, func(v int) string { return fmt.Sprintf(`{"local": {"batch_size": %d}}`, v) }})
	for _, c := range counts {
		field := OptionsField + "." + c.field
		t.Run(c.rule+" "+c.field, func(t *testing.T) {
			build := func(v int) error {
				s := c.s
				s.Options = json.RawMessage(c.options(v))
				_, err := New(c.rule, s)
				return err
			}
			if err := build(c.max); err != nil {
				t.Errorf("%s = %d (the bound): %v", field, c.max, err)
			}
			for _, v := range []int{c.max + 1, 1<<31 - 1, -1} {
				err := build(v)
				var fe *FieldError
				want := fmt.Sprintf("%d; must be in [0, %d]", v, c.max)
				if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Problem, want) {
					t.Errorf("%s = %d: error %v; want one at %s with %q", field, v, err, field, want)
				}
			}
		})
	}
}

// TestStepSizeOptions checks that a negative step size of a distillation is refused naming its
// field.
func TestStepSizeOptions(t *testing.T) {
	s := Settings{Kind: models.Deterministic, HasServer: true, Clients: 2}
	for _, field := range []string{"learning_rate", "swa_min_lr"} {
		s.Options = json.RawMessage(fmt.Sprintf(`{"distill": {%q: -0.5}}`, field))
		_, err := New(FedBEGaussian, s)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != OptionsField+".distill."+field || !strings.Contains(fe.Problem, "-0.5; must be >= 0") {
			t.Errorf("%s -0.5: %v", field, err)
		}
	}
}

// TestServerNetworks checks the networks FedBE and FedKT report for the memory estimate: M + K + 1
// teachers, and K s t.
func TestServerNetworks(t *testing.T) {
	s := Settings{Kind: models.Deterministic, HasServer: true, Clients: 4, MaxNetworks: 100_000, Options: json.RawMessage(`{"samples": 7}`)}
	fb, err := New(FedBEGaussian, s)
	if err != nil {
		t.Fatal(err)
	}
	s.Clients, s.Options = 3, json.RawMessage(`{"students": 2, "teachers": 5}`)
	kt, err := New(FedKTName, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		st   Strategy
		want int
	}{{fb, 7 + 4 + 1}, {kt, 3 * 2 * 5}} {
		n, ok := tc.st.(ServerNetworker)
		if !ok || n.ServerNetworks() != tc.want {
			t.Errorf("%T: ServerNetworker %v, want %d networks", tc.st, ok, tc.want)
		}
	}
}
