package reproduce

import "testing"

// TestFindingBudget checks the budget each finding's "Judged by" line names: the report's own for
// presets at it, a claim preset's own budget by name, and none for a finding computed without runs.
func TestFindingBudget(t *testing.T) {
	medium := ozerPreset("c10-iid").Name(Medium)
	for _, tc := range []struct {
		name    string
		presets []string
		want    string
	}{
		{"medium presets", []string{medium, ozerPreset("c100-iid").Name(Medium)}, "medium budget (the presets above)"},
		{"claim preset", []string{ozerCalibrationName},
			"the calibration claim budget of `" + ozerCalibrationName + "` (its reason under the section)"},
		{"claim and medium", []string{ozerCollapseName, medium},
			"the collapse claim budget of `" + ozerCollapseName + "` (its reason under the section); the medium budget for the others"},
		{"no runs", []string{}, "computed without runs"},
		{"label before a parenthesis", []string{chenPreset.Name(Medium)}, "medium budget (the presets above)"},
	} {
		if got := findingBudget(tc.presets, Medium); got != tc.want {
			t.Errorf("%s: findingBudget(%q) = %q, want %q", tc.name, tc.presets, got, tc.want)
		}
	}
}

// TestBudgetLabel checks the budget name read off the presets' budget sentences.
func TestBudgetLabel(t *testing.T) {
	for in, want := range map[string]string{
		"medium: all training / all test examples, T=10 rounds": "medium",
		"medium (paper: CIFAR-10 and a ConvNet, T=40)":          "medium",
		"collapse claim: all training / all test examples":      "collapse claim",
		"no label here": "",
		"":              "",
	} {
		if got := budgetLabel(in); got != want {
			t.Errorf("budgetLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
