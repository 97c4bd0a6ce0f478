package results

import (
	"strings"
	"testing"
)

// TestMetaDiffers checks which differences make two metas different experiments.
func TestMetaDiffers(t *testing.T) {
	base := Meta{Setting: "s", Seed: 1, Labels: map[string]string{"rule": "GAA"}, Spec: []byte(`{"lr":0.1,"budget":"reduced: T=5"}`)}
	for _, tc := range []struct {
		name string
		edit func(*Meta)
		want string
	}{
		{"same", func(m *Meta) {}, ""},
		{"budget sentence", func(m *Meta) { m.Spec = []byte(`{"budget":"reduced: T=5; rows dropped","lr":0.1}`) }, ""},
		{"provenance", func(m *Meta) { m.Info.GitCommit = "abc" }, ""},
		{"spec value", func(m *Meta) { m.Spec = []byte(`{"lr":0.2,"budget":"reduced: T=5"}`) }, "the specs differ: lr: 0.1 in the recorded run, 0.2 now"},
		{"same number written otherwise", func(m *Meta) { m.Spec = []byte(`{"lr":1e-1,"budget":"reduced: T=5"}`) }, ""},
		{"spec field added", func(m *Meta) { m.Spec = []byte(`{"lr":0.1,"mu":0.01}`) }, "mu: absent in the recorded run, 0.01 now"},
		{"seed", func(m *Meta) { m.Seed = 2 }, "seed: 1 in the recorded run, 2 now"},
		{"more seeds in the sweep", func(m *Meta) { m.Spec = []byte(`{"lr":0.1,"seeds":[0,1,2,3,4]}`) }, ""},
		{"labels", func(m *Meta) { m.Labels = map[string]string{"rule": "EAA"} }, `label rule: "GAA" in the recorded run, "EAA" now`},
		{"label removed", func(m *Meta) { m.Labels = nil }, `label rule: "GAA" in the recorded run, absent now`},
		{"setting", func(m *Meta) { m.Setting = "t" }, `setting: "s" in the recorded run, "t" now`},
		{"huge setting is cut", func(m *Meta) { m.Setting = strings.Repeat("é", 1<<20) }, `setting: "s" in the recorded run, "` + strings.Repeat("é", 40) + `…" now`},
	} {
		o := base
		tc.edit(&o)
		got := base.Differs(o)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Differs = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Field paths through objects and arrays; exact integers; at most five fields listed.
	deep := Meta{Setting: "s", Spec: []byte(`{"training":{"rounds":5,"lr":0.1},"seeds":[9007199254740993,2],"model":{"hidden":[1,2,3,4,5,6]}}`)}
	for _, tc := range []struct{ spec, want string }{
		{`{"training":{"rounds":6,"lr":0.1},"seeds":[9007199254740993,2],"model":{"hidden":[1,2,3,4,5,6]}}`, "the specs differ: training.rounds: 5 in the recorded run, 6 now"},
		{`{"training":{"rounds":5,"lr":0.1,"seed":9007199254740992},"seeds":[9007199254740993,2],"model":{"hidden":[1,2,3,4,5,6]}}`, "training.seed: absent in the recorded run, 9007199254740992 now"},
		{`{"training":{"rounds":5,"lr":0.1},"seeds":[9007199254740993],"model":{"hidden":[1,2,3,4,5,6]}}`, ""}, // the seed list is not compared
		{`{"training":{"rounds":5,"lr":0.1},"seeds":[9007199254740993,2],"model":{"hidden":[1]}}`, "model.hidden: [1,2,3,4,5,6] in the recorded run, [1] now"},
		{`{"training":{"rounds":5,"lr":0.1},"seeds":[9007199254740993,2],"model":{"hidden":[0,0,0,0,0,0]}}`, "model.hidden[0]: 1 in the recorded run, 0 now; model.hidden[1]: 2 in the recorded run, 0 now; model.hidden[2]: 3 in the recorded run, 0 now; model.hidden[3]: 4 in the recorded run, 0 now; model.hidden[4]: 5 in the recorded run, 0 now; and 1 more"},
		{`[1]`, `(the whole spec): {"model":`},
	} {
		o := deep
		o.Spec = []byte(tc.spec)
		if got := deep.Differs(o); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Differs(%s) = %q, want it to contain %q", tc.spec, got, tc.want)
		}
	}
	nested := Meta{Setting: "p", Spec: []byte(`{"spec":{"budget":"full","epochs":3},"h":0.3}`)}
	other := nested
	other.Spec = []byte(`{"spec":{"budget":"reduced: 1 seed","epochs":3},"h":0.3}`)
	if why := nested.Differs(other); why != "" {
		t.Errorf("nested budget: Differs = %q, want none", why)
	}
	// Only the top-level seed list is left out: a nested spec's seeds are compared.
	other.Spec = []byte(`{"spec":{"budget":"full","epochs":3,"seeds":[1]},"h":0.3}`)
	if why := nested.Differs(other); !strings.Contains(why, "spec.seeds: absent in the recorded run, [1] now") {
		t.Errorf("nested seeds: Differs = %q, want a difference at spec.seeds", why)
	}
}
