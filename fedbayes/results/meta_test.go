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
		{"spec value", func(m *Meta) { m.Spec = []byte(`{"lr":0.2,"budget":"reduced: T=5"}`) }, "the specs differ"},
		{"seed", func(m *Meta) { m.Seed = 2 }, "seed 1 != 2"},
		{"labels", func(m *Meta) { m.Labels = map[string]string{"rule": "EAA"} }, "labels"},
		{"setting", func(m *Meta) { m.Setting = "t" }, `setting "s" != "t"`},
	} {
		o := base
		tc.edit(&o)
		got := base.Differs(o)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Differs = %q, want %q", tc.name, got, tc.want)
		}
	}
	nested := Meta{Setting: "p", Spec: []byte(`{"spec":{"budget":"full","epochs":3},"h":0.3}`)}
	other := nested
	other.Spec = []byte(`{"spec":{"budget":"reduced: 1 seed","epochs":3},"h":0.3}`)
	if why := nested.Differs(other); why != "" {
		t.Errorf("nested budget: Differs = %q, want none", why)
	}
}
