package results

import (
	"encoding/json"
	"testing"
)

// TestUpgradeSpec checks the alias table on the former layouts the engine wrote: the committed
// records' aggregation.server objects (FedBE, FedPA's fedpa_rho, FedKT's nested options with its
// distill before the server's), sweep and variant paths, and specs already in the current layout.
func TestUpgradeSpec(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		changed        bool
	}{
		{"fedbe", `{"aggregation": {"rule": "fedbe-gaussian", "server": {"alpha": 1, "samples": 10, "distill": {"epochs": 20}}}}`,
			`{"aggregation":{"options":{"alpha":1,"distill":{"epochs":20},"samples":10},"rule":"fedbe-gaussian"}}`, true},
		{"fedpa", `{"aggregation": {"server": {"fedpa_rho": 0.4, "server_lr": 0.5}}}`,
			`{"aggregation":{"options":{"rho":0.4,"server_lr":0.5}}}`, true},
		{"fedkt", `{"aggregation": {"server": {"distill": {"epochs": 20}, "fedkt": {"distill": {"epochs": 5}, "students": 2, "local": {"epochs": 15}}}}}`,
			`{"aggregation":{"options":{"distill":{"epochs":5},"local":{"epochs":15},"students":2}}}`, true},
		{"fedkt with the server's distill", `{"aggregation": {"server": {"distill": {"epochs": 20}, "fedkt": {"distill": {}, "teachers": 3}}}}`,
			`{"aggregation":{"options":{"distill":{"epochs":20},"teachers":3}}}`, true},
		{"empty", `{"aggregation": {"server": {}}}`, `{"aggregation":{"options":{}}}`, true},
		{"sweep and variants", `{"sweep": {"aggregation.server.fedpa_rho": [0.1], "aggregation.server.fedkt.teachers": [2], "training.rounds": [1]},
			"variants": [{"label": "a", "set": {"aggregation.server": {"fedpa_rho": 0.2}}}]}`,
			`{"sweep":{"aggregation.options.rho":[0.1],"aggregation.options.teachers":[2],"training.rounds":[1]},"variants":[{"label":"a","set":{"aggregation.options":{"rho":0.2}}}]}`, true},
		{"a variant's whole fedkt object", `{"variants": [{"label": "a", "set": {"aggregation.server.fedkt": {"teachers": 3}}}]}`,
			`{"variants":[{"label":"a","set":{"aggregation.options.teachers":3}}]}`, true},
		{"a variant's fedkt object resets what the spec set", `{"aggregation": {"server": {"fedkt": {"students": 3, "plain_vote": true}}}, "variants": [{"label": "a", "set": {"aggregation.server.fedkt": {"distill": {"epochs": 3}, "local": {"epochs": 2}}}}]}`,
			`{"aggregation":{"options":{"plain_vote":true,"students":3}},"variants":[{"label":"a","set":{"aggregation.options.distill":{"epochs":3},"aggregation.options.local":{"epochs":2},"aggregation.options.plain_vote":false,"aggregation.options.students":0}}]}`, true},
		{"a sweep of fedkt objects keeps its path", `{"sweep": {"aggregation.server.fedkt": [{"teachers": 3}]}}`,
			`{"sweep": {"aggregation.server.fedkt": [{"teachers": 3}]}}`, false},
		{"swept server objects", `{"sweep": {"aggregation.server": [{"fedpa_rho": 0.1}, {"samples": 2}]}}`,
			`{"sweep":{"aggregation.options":[{"rho":0.1},{"samples":2}]}}`, true},
		{"current layout", `{"aggregation": {"options": {"rho": 0.4}}, "dataset": {"server_fraction": 0.2}}`,
			`{"aggregation": {"options": {"rho": 0.4}}, "dataset": {"server_fraction": 0.2}}`, false},
		{"both layouts left alone", `{"aggregation": {"server": {"samples": 1}, "options": {"samples": 2}}}`,
			`{"aggregation": {"server": {"samples": 1}, "options": {"samples": 2}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := UpgradeSpecJSON([]byte(tc.in))
			if string(got) != tc.want || changed != tc.changed {
				t.Errorf("got %s (changed %v)\nwant %s (changed %v)", got, changed, tc.want, tc.changed)
			}
		})
	}
}

// TestDiffersAcrossLayouts checks that a run recorded in the former layout is the same experiment
// as the spec that gives the same options in the current one, and a different one when they differ.
func TestDiffersAcrossLayouts(t *testing.T) {
	meta := func(spec string) Meta { return Meta{Setting: "s", Seed: 1, Spec: json.RawMessage(spec)} }
	recorded := meta(`{"aggregation": {"rule": "fedpa", "server": {"fedpa_rho": 0.4, "server_lr": 0.5}}}`)
	if why := recorded.Differs(meta(`{"aggregation": {"rule": "fedpa", "options": {"server_lr": 0.5, "rho": 0.4}}}`)); why != "" {
		t.Errorf("the same options in two layouts differ: %s", why)
	}
	want := "the specs differ: aggregation.options.rho: 0.4 in the recorded run, 0.3 now"
	if why := recorded.Differs(meta(`{"aggregation": {"rule": "fedpa", "options": {"server_lr": 0.5, "rho": 0.3}}}`)); why != want {
		t.Errorf("other options: %q, want %q", why, want)
	}
}

// TestUpgradeSpecPath checks the paths of the alias table, the longest alias first.
func TestUpgradeSpecPath(t *testing.T) {
	for in, want := range map[string]string{
		"aggregation.server":                    "aggregation.options",
		"aggregation.server.samples":            "aggregation.options.samples",
		"aggregation.server.fedpa_rho":          "aggregation.options.rho",
		"aggregation.server.distill.epochs":     "aggregation.options.distill.epochs",
		"aggregation.server.fedkt.local.epochs": "aggregation.options.local.epochs",
		"aggregation.serverx":                   "aggregation.serverx",
		"aggregation.rule":                      "aggregation.rule",
	} {
		if got := UpgradeSpecPath(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
