package backend

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExpectedAPIMatchesGoXLAHeader reads PJRT_API_MAJOR/MINOR from the pjrt_c_api.h that go-xla
// v0.1.4 compiles with, so ExpectedAPI cannot drift from the module actually built.
func TestExpectedAPIMatchesGoXLAHeader(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 || fields[1] != GoXLAVersion {
		t.Fatalf("go-xla module = %q, want version %s", out, GoXLAVersion)
	}
	h, err := os.ReadFile(filepath.Join(fields[0], "pkg", "pjrt", "pjrt_c_api.h"))
	if err != nil {
		t.Skipf("go-xla sources not in the module cache: %v", err)
	}
	get := func(name string) int {
		m := regexp.MustCompile(`#define ` + name + ` (\d+)`).FindSubmatch(h)
		if m == nil {
			t.Fatalf("%s not in pjrt_c_api.h", name)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	if got := (APIVersion{get("PJRT_API_MAJOR"), get("PJRT_API_MINOR")}); got != ExpectedAPI {
		t.Errorf("go-xla's header says PJRT API %s, ExpectedAPI is %s", got, ExpectedAPI)
	}
}

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.so")
	if err := os.WriteFile(text, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    APIVersion
		wantErr string
	}{
		{"plugin", fakePlugin(t, dir, "pjrt_fake", 0, 83), APIVersion{0, 83}, ""},
		{"newer plugin", fakePlugin(t, dir, "pjrt_newer", 0, 90), APIVersion{0, 90}, ""},
		{"text file", text, APIVersion{}, "not a loadable shared library"},
		{"library without GetPjrtApi", notAPlugin(t, dir), APIVersion{}, "does not export GetPjrtApi"},
		{"folder", dir, APIVersion{}, "is a folder"},
		{"missing", filepath.Join(dir, "absent.so"), APIVersion{}, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Probe(tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Probe(%s) = %v, %v; want an error containing %q", tc.path, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Probe(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
			}
		})
	}
}

func TestCompatible(t *testing.T) {
	tests := []struct {
		v    APIVersion
		ok   bool
		word string
	}{
		{ExpectedAPI, true, "as go-xla"},
		{APIVersion{ExpectedAPI.Major, ExpectedAPI.Minor + 5}, true, "newer"},
		{APIVersion{ExpectedAPI.Major, ExpectedAPI.Minor - 5}, true, "older"},
		{APIVersion{ExpectedAPI.Major + 1, 0}, false, "needs major version"},
	}
	for _, tc := range tests {
		ok, why := tc.v.Compatible()
		if ok != tc.ok || !strings.Contains(why, tc.word) {
			t.Errorf("%v.Compatible() = %v, %q; want %v and %q", tc.v, ok, why, tc.ok, tc.word)
		}
	}
}

func TestPluginName(t *testing.T) {
	for path, want := range map[string]string{
		"/x/pjrt_c_api_cpu_plugin.so":                                "cpu",
		"/x/pjrt_c_api_cuda_plugin.so":                               "cuda",
		"/v/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so": "cuda",
		"/x/pjrt_c_api_cpu_v0.83.3_plugin.so":                        "cpu",
		"/x/libmystery.so":                                           "",
	} {
		if got := pluginName(path); got != want {
			t.Errorf("pluginName(%s) = %q, want %q", path, got, want)
		}
	}
}
