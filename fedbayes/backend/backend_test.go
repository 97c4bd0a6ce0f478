package backend

import (
	"strings"
	"testing"
)

func TestChooseFromEnvironment(t *testing.T) {
	tests := []struct {
		env     string
		want    string // config, when no error
		wantErr string // substring of the error
	}{
		{env: "go", want: "go"},
		{env: "nosuchbackend", wantErr: `unknown backend "nosuchbackend"`},
		{env: "nosuchbackend:cfg", wantErr: "known backends:"},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("GOMLX_BACKEND", tc.env)
			t.Setenv(LauncherReasonEnv, "")
			c, err := Choose()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Choose() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Choose(): %v", err)
			}
			if c.Config != tc.want || !strings.Contains(c.Reason, "GOMLX_BACKEND") {
				t.Errorf("Choose() = %+v, want config %q chosen by GOMLX_BACKEND", c, tc.want)
			}
		})
	}
}

func TestChooseXLAWithoutPlugin(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	if c, _ := Choose(); len(c.XLAPlugins) > 0 {
		t.Skipf("an XLA plugin is installed here (%v)", c.XLAPlugins)
	}
	t.Setenv("GOMLX_BACKEND", "xla:cpu")
	_, err := Choose()
	if err == nil || !strings.Contains(err.Error(), "no PJRT plugin is installed") {
		t.Fatalf("Choose() with xla:cpu and no plugin: error = %v, want a missing-plugin message", err)
	}
}

func TestChooseDefaultIsPureGoWithoutPlugin(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	c, err := Choose()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.XLAPlugins) > 0 {
		if !strings.HasPrefix(c.Config, "xla:") {
			t.Errorf("plugins %v found but config is %q", c.XLAPlugins, c.Config)
		}
		return
	}
	if c.Config != PureGo {
		t.Errorf("no plugin: config = %q, want the pure-Go backend %q", c.Config, PureGo)
	}
}

func TestLauncherReason(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "go")
	t.Setenv(LauncherReasonEnv, "no XLA plugin found")
	c, err := Choose()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Reason, "kernel launcher") || !strings.Contains(c.Reason, "no XLA plugin found") {
		t.Errorf("reason = %q, want the launcher's reason", c.Reason)
	}
}

func TestNewWithConfigUnknownIsAnError(t *testing.T) {
	if _, err := newWithConfig("nosuchbackend"); err == nil {
		t.Fatal("newWithConfig(nosuchbackend) returned no error")
	}
}
