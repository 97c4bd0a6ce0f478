package backend

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestInstallWithoutNetwork: offline, refused or silent, `install cpu` answers in well under 30 s
// with the file to fetch by hand (go-xla's exact archive and version) and the folder to put it in.
func TestInstallWithoutNetwork(t *testing.T) {
	tests := []struct {
		name      string
		transport http.RoundTripper
		want      string
	}{
		{"offline", roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, errors.New("dial tcp: lookup api.github.com: no such host")
		}), "cannot reach api.github.com"},
		{"refused", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 403, Status: "403 Forbidden", Body: http.NoBody, Request: r}, nil
		}), "refused the request: HTTP 403 Forbidden (GitHub limits"},
		{"no answer", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}), "no answer from api.github.com within 200ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "xla")
			start := time.Now()
			_, err := Install(context.Background(), InstallOptions{Kind: "cpu", Dir: dir, Transport: tc.transport, Timeout: 200 * time.Millisecond})
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Install took %s without a network", elapsed)
			}
			var ie *InstallError
			if !errors.As(err, &ie) {
				t.Fatalf("Install error = %v, want an *InstallError", err)
			}
			msg := err.Error()
			for _, want := range []string{tc.want, cpuAsset(), CPUPluginVersion, "releases/download/" + CPUPluginVersion,
				"tar -xzf " + cpuAsset() + " -C " + dir, "install --from " + dir + "/pjrt_c_api_cpu_" + CPUPluginVersion + "_plugin.so"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q:\n%s", want, msg)
				}
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a failed install created %s (%v)", dir, err)
			}
		})
	}
}

func TestInstallUnknownKind(t *testing.T) {
	if _, err := Install(context.Background(), InstallOptions{Kind: "tpu"}); err == nil || !strings.Contains(err.Error(), "want cpu or cuda") {
		t.Fatalf("Install(tpu) error = %v", err)
	}
}

func TestInstallFromRejectsNonPlugins(t *testing.T) {
	src := t.TempDir()
	text := filepath.Join(src, "pjrt_c_api_cpu_plugin.so")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"text file", text, "not a loadable shared library"},
		{"library without GetPjrtApi", notAPlugin(t, src), "does not export GetPjrtApi"},
		{"other major version", fakePlugin(t, src, "pjrt_c_api_future_plugin", ExpectedAPI.Major+1, 0), "needs major version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := InstallFrom(tc.path, FromOptions{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "not installed") {
				t.Fatalf("InstallFrom(%s) error = %v, want %q", tc.path, err, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a rejected file left %d entries in %s", len(entries), dir)
			}
		})
	}
}

// TestInstallFromLinksAndIsChosen: a file that loads as a PJRT plugin is linked (or copied) into the
// fedbayes folder under go-xla's naming, found by Plugins, and chosen by absolute path.
func TestInstallFromLinksAndIsChosen(t *testing.T) {
	src := t.TempDir()
	so := fakePlugin(t, src, "libfake", ExpectedAPI.Major, ExpectedAPI.Minor)
	for _, copy := range []bool{false, true} {
		dir := t.TempDir()
		t.Setenv(DirEnv, dir)
		p, v, err := InstallFrom(so, FromOptions{Name: "fake", Copy: copy})
		if err != nil || v != ExpectedAPI {
			t.Fatalf("InstallFrom(copy=%v) = %v, %v", copy, v, err)
		}
		dest := filepath.Join(dir, "pjrt_c_api_fake_plugin.so")
		st, err := os.Lstat(dest)
		if err != nil || (st.Mode()&os.ModeSymlink != 0) == copy {
			t.Fatalf("copy=%v: %s: %v, mode %v", copy, dest, err, st)
		}
		wantPath := so
		if copy {
			wantPath = dest
		}
		if p.Path != wantPath || p.Name != "fake" {
			t.Errorf("copy=%v: plugin = %+v, want path %s", copy, p, wantPath)
		}
		found := Plugins()
		if len(found) == 0 || found[0].Name != "fake" || found[0].Path != wantPath {
			t.Fatalf("copy=%v: Plugins() = %+v, want the fake plugin first", copy, found)
		}
		t.Setenv(backends.ConfigEnvVar, "xla:fake")
		c, err := Choose()
		if err != nil || c.Config != "xla:"+wantPath || c.Plugin == nil {
			t.Errorf("copy=%v: Choose() = %+v, %v; want config xla:%s", copy, c, err, wantPath)
		}
		// Installing again replaces the file atomically and keeps one entry.
		if _, _, err := InstallFrom(so, FromOptions{Name: "fake", Copy: copy}); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("copy=%v: %d entries after reinstalling, want 1", copy, len(entries))
		}
	}
}

// TestPluginsOnePerPlatform: go-xla's CPU layout (a versioned file and a link to it) is one plugin.
func TestPluginsOnePerPlatform(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	so := fakePlugin(t, t.TempDir(), "libfake", ExpectedAPI.Major, ExpectedAPI.Minor)
	versioned := filepath.Join(dir, "pjrt_c_api_fake_v1.2.3_plugin.so")
	if err := os.Rename(so, versioned); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(versioned), filepath.Join(dir, "pjrt_c_api_fake_plugin.so")); err != nil {
		t.Fatal(err)
	}
	var fakes []Plugin
	for _, p := range Plugins() {
		if p.Name == "fake" {
			fakes = append(fakes, p)
		}
	}
	if len(fakes) != 1 || fakes[0].Path != versioned {
		t.Errorf("Plugins() fake entries = %+v, want one, at %s", fakes, versioned)
	}
}

// TestPluginsSkipsBrokenFiles: a file in the fedbayes folder named like a plugin that is not one is
// not chosen, and PluginProblems says why.
func TestPluginsSkipsBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	t.Setenv(backends.ConfigEnvVar, "")
	if err := os.WriteFile(filepath.Join(dir, "pjrt_c_api_cpu_plugin.so"), []byte("half a download"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := fakePlugin(t, t.TempDir(), "libfuture", ExpectedAPI.Major+1, 0)
	if err := os.Symlink(future, filepath.Join(dir, "pjrt_c_api_future_plugin.so")); err != nil {
		t.Fatal(err)
	}
	for _, p := range Plugins() {
		if strings.HasPrefix(p.Path, dir) || p.Path == future {
			t.Errorf("Plugins() lists the unusable %+v", p)
		}
	}
	problems := strings.Join(PluginProblems(), "\n")
	for _, want := range []string{"pjrt_c_api_cpu_plugin.so is not a loadable shared library", "needs major version"} {
		if !strings.Contains(problems, want) {
			t.Errorf("PluginProblems() lacks %q:\n%s", want, problems)
		}
	}
	if c, err := Choose(); err != nil || c.Plugin != nil && (strings.HasPrefix(c.Plugin.Path, dir) || c.Plugin.Path == future) {
		t.Errorf("Choose() = %+v, %v: chose a broken plugin", c, err)
	}
}

func TestInstallFromNeedsAName(t *testing.T) {
	so := fakePlugin(t, t.TempDir(), "libmystery", ExpectedAPI.Major, ExpectedAPI.Minor)
	_, _, err := InstallFrom(so, FromOptions{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "-name") {
		t.Fatalf("InstallFrom(libmystery.so) error = %v, want one asking for -name", err)
	}
}
