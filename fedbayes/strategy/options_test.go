package strategy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
)

// mustJSON marshals v (options in tests).
func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// TestDecodeOptions checks the strict decoding of a strategy's options: defaults kept without
// options, and every refusal a *FieldError naming the field under aggregation.options.
func TestDecodeOptions(t *testing.T) {
	type inner struct {
		Epochs int `json:"epochs"`
	}
	type opts struct {
		BetaOptions
		Samples int   `json:"samples"`
		Inner   inner `json:"inner"`
	}
	for _, tc := range []struct {
		name, raw, field, problem string
		want                      opts
	}{
		{"none keeps the defaults", "", "", "", opts{Samples: 7}},
		{"null keeps the defaults", "null", "", "", opts{Samples: 7}},
		{"fields", `{"samples": 3, "inner": {"epochs": 2}, "beta_max": 0.5}`, "", "", opts{Samples: 3, Inner: inner{2}, BetaOptions: BetaOptions{BetaMax: 0.5}}},
		{"unknown field", `{"sample": 3}`, "aggregation.options.sample", "unknown option; options here: beta_min, beta_max, samples, inner", opts{}},
		{"unknown nested field", `{"inner": {"epoch": 3}}`, "aggregation.options.inner.epoch", "unknown option; options here: epochs", opts{}},
		{"wrong type", `{"samples": "ten"}`, "aggregation.options.samples", "cannot be read as int", opts{}},
		{"duplicate key", `{"samples": 1, "samples": 2}`, "aggregation.options.samples", "appears twice", opts{}},
		{"not an object", `[1]`, "aggregation.options", "JSON object", opts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := opts{Samples: 7}
			err := DecodeOptions(Settings{Options: json.RawMessage(tc.raw)}, &got)
			if tc.field == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Problem, tc.problem) {
				t.Fatalf("error %v; want field %s with %q", err, tc.field, tc.problem)
			}
		})
	}
}

// TestStrategiesOwnOptions checks that each built-in strategy reads its own options and refuses,
// naming the field, one it does not take or a bad value.
func TestStrategiesOwnOptions(t *testing.T) {
	base := Settings{Kind: models.Deterministic, HasServer: true}
	sampling := Settings{Kind: models.Deterministic, HasServer: true, Sampling: true, PriorStd: 1}
	for _, tc := range []struct {
		name, rule string
		s          Settings
		options    string
		field      string
	}{
		{"fedbe takes samples, alpha, distill", FedBEDirichlet, base, `{"samples": 3, "alpha": 2, "distill": {"epochs": 4, "swa_cycles": 2}}`, ""},
		{"fedbe negative samples", FedBEGaussian, base, `{"samples": -1}`, "aggregation.options.samples"},
		{"fedbe negative alpha", FedBEGaussian, base, `{"alpha": -1}`, "aggregation.options.alpha"},
		{"fedbe sharpens its pseudo labels", FedBEGaussian, base, `{"temperature": 0.5}`, ""},
		{"fedbe negative temperature", FedBEGaussian, base, `{"temperature": -0.5}`, "aggregation.options.temperature"},
		{"fedbe distill optimizer", FedBEGaussian, base, `{"distill": {"optimizer": "rmsprop"}}`, "aggregation.options.distill.optimizer"},
		{"fedbe distill momentum", FedBEGaussian, base, `{"distill": {"optimizer": "sgd", "momentum": 1}}`, "aggregation.options.distill.momentum"},
		{"fedbe distill momentum with adam", FedBEGaussian, base, `{"distill": {"optimizer": "adam", "momentum": 0.9}}`, "aggregation.options.distill.momentum"},
		{"fedbe distill negative momentum", OneshotFLName, base, `{"distill": {"momentum": -0.1}}`, "aggregation.options.distill.momentum"},
		{"oneshotfl momentum under its default adam", OneshotFLName, base, `{"distill": {"momentum": 0.5}}`, "aggregation.options.distill.momentum"},
		{"oneshotfl momentum with sgd", OneshotFLName, base, `{"distill": {"optimizer": "sgd", "momentum": 0.5}}`, ""},
		{"fedbe momentum under its default sgd", FedBEGaussian, base, `{"distill": {"momentum": 0.5}}`, ""},
		{"fedkt local momentum with adam", FedKTName, base, `{"local": {"optimizer": "adam", "momentum": 0.5}}`, "aggregation.options.local.momentum"},
		{"fedkt seed", FedKTName, base, `{"seed": 5}`, "aggregation.options.seed"},
		{"fedkt local seed", FedKTName, base, `{"local": {"seed": 3}}`, "aggregation.options.seed"},
		{"distill seed", FedKTName, base, `{"distill": {"seed": 9}}`, "aggregation.options.distill.seed"},
		{"fedbe refuses beta", FedBEGaussian, base, `{"beta_min": 0.1}`, "aggregation.options.beta_min"},
		{"fedpa takes rho and server_lr", FedPAName, sampling, `{"rho": 0, "server_lr": 0.5}`, ""},
		{"fedpa negative rho", FedPAName, sampling, `{"rho": -1}`, "aggregation.options"},
		{"fedpa refuses the old name", FedPAName, sampling, `{"fedpa_rho": 0.4}`, "aggregation.options.fedpa_rho"},
		{"beta-predbayes range", BetaPredBayes, sampling, `{"beta_min": 0.2, "beta_max": 0.8}`, ""},
		{"beta-predbayes empty range", BetaPredBayes, sampling, `{"beta_min": 0.8, "beta_max": 0.2}`, "aggregation.options.beta_max"},
		{"beta-predbayes refuses distill", BetaPredBayes, sampling, `{"distill": {}}`, "aggregation.options.distill"},
		{"d-beta takes all", DBetaPredBayes, sampling, `{"beta_max": 0.5, "distill": {"epochs": 2}, "student_start": "previous"}`, ""},
		{"d-bcm refuses beta", DBCM, sampling, `{"beta_max": 0.5}`, "aggregation.options.beta_max"},
		{"d-bcm student start", DBCM, sampling, `{"student_start": "nowhere"}`, "aggregation.options.student_start"},
		{"bcm takes none", BCM, sampling, `{"samples": 10}`, "aggregation.options.samples"},
		{"bcm empty object", BCM, sampling, `{}`, ""},
		{"ep-mcmc takes none", EPMCMCName, sampling, `{"x": 1}`, "aggregation.options.x"},
		{"oneshotfl distill", OneshotFLName, base, `{"distill": {"epochs": 3}}`, ""},
		{"fedkt fields", FedKTName, base, `{"students": 1, "teachers": 2, "plain_vote": true, "local": {"epochs": 1}, "distill": {"epochs": 1}}`, ""},
		{"fedkt negative", FedKTName, base, `{"students": -1}`, "aggregation.options"},
		{"fedkt local optimizer", FedKTName, base, `{"local": {"optimizer": "x"}}`, "aggregation.options.local.optimizer"},
		{"a rule takes none", "GAA", Settings{}, `{"samples": 10}`, "aggregation.options"},
		{"a rule with none", "GAA", Settings{}, ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.Options = json.RawMessage(tc.options)
			_, err := New(tc.rule, s)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %v; want one at %s", err, tc.field)
			}
		})
	}
}

// TestFedKTOptionsReachConfig checks that FedKT's options arrive in its configuration, with the
// clients' local training where the options leave it unset.
func TestFedKTOptionsReachConfig(t *testing.T) {
	local := predictive.LocalConfig{Optimizer: "adam", LearningRate: 0.002, Epochs: 3, BatchSize: 16}
	for _, tc := range []struct {
		name    string
		options string
		want    predictive.LocalConfig
	}{
		{"the clients' training", `{"teachers": 4}`, local},
		{"its own, the rest from the clients' training", `{"teachers": 4, "local": {"epochs": 7}}`,
			predictive.LocalConfig{Optimizer: "adam", LearningRate: 0.002, Epochs: 7, BatchSize: 16}},
		{"its own optimizer with no momentum", `{"teachers": 4, "local": {"optimizer": "sgd", "learning_rate": 0.1}}`,
			predictive.LocalConfig{Optimizer: "sgd", LearningRate: 0.1, Epochs: 3, BatchSize: 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := New(FedKTName, Settings{Kind: models.Deterministic, HasServer: true, Local: local, Options: json.RawMessage(tc.options)})
			if err != nil {
				t.Fatal(err)
			}
			c := st.(*FedKT).Config
			if c.Teachers != 4 || c.Students != 2 || c.Local != tc.want.WithDefaults() {
				t.Fatalf("config %+v; want 4 teachers, 2 students, local %+v", c, tc.want)
			}
		})
	}
}

// TestFedKTChecksClients checks FedKT's ClientChecker: every client needs one example per teacher.
func TestFedKTChecksClients(t *testing.T) {
	st, err := New(FedKTName, Settings{Kind: models.Deterministic, HasServer: true, Options: json.RawMessage(`{"teachers": 3}`)})
	if err != nil {
		t.Fatal(err)
	}
	cc, ok := st.(ClientChecker)
	if !ok {
		t.Fatal("FedKT does not implement ClientChecker")
	}
	if err := cc.CheckClients([]int{3, 10}); err != nil {
		t.Fatal(err)
	}
	err = cc.CheckClients([]int{3, 2})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "aggregation.options.teachers" || !strings.Contains(fe.Problem, "client 1 has 2 examples") {
		t.Fatalf("error %v; want client 1's 2 examples refused at aggregation.options.teachers", err)
	}
}
