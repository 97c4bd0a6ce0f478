package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gomlx/go-xla/pkg/installer"
)

// InstallOptions configures Install.
type InstallOptions struct {
	// Kind is "cpu" or "cuda".
	Kind string
	// Dir is the folder to install into; "" means Dir().
	Dir string
	// Force installs the CUDA plugin even where no NVIDIA GPU is found.
	Force bool
	// Timeout bounds the first contact with the download site (default 15 s), so that an offline or
	// filtered machine gets its answer quickly; each later connection and response header is bounded
	// by it too. The download itself is not (CUDA's NVIDIA libraries are gigabytes).
	Timeout time.Duration
	// Transport, if not nil, carries every request (tests use it to simulate a machine offline or a
	// refusal); nil means Go's default transport with the timeouts above.
	Transport http.RoundTripper
	// Log receives fedbayes's own progress lines; go-xla's installer prints its progress to stdout.
	Log io.Writer
}

// The first URL go-xla v0.1.4's installer asks for each kind: reaching it is the network check.
func probeURL(kind string) string {
	if kind == "cuda" {
		return "https://pypi.org/pypi/jax-cuda13-pjrt/json"
	}
	return "https://api.github.com/repos/" + installer.BinaryCPUReleasesRepo + "/releases/tags/" + CPUPluginVersion
}

// cpuAsset is the archive go-xla v0.1.4 downloads for the CPU plugin on this platform.
func cpuAsset() string {
	return fmt.Sprintf("pjrt_cpu_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
}

// ManualInstructions says, for a machine where Install cannot download, which file to fetch by hand
// (the exact file and version go-xla v0.1.4 installs) and where to put it.
func ManualInstructions(kind, dir string) string {
	if kind == "cuda" {
		return fmt.Sprintf(`To install the CUDA plugin by hand, on a machine that can reach pypi.org:
  1. python3 -m venv jaxenv && jaxenv/bin/pip install "jax[cuda13]"
     (this is what go-xla %s installs: the newest jax-cuda13-pjrt wheel, whose xla_cuda_plugin.so is
     the plugin, and the nvidia-* wheels jax-cuda13-plugin depends on, for the NVIDIA libraries)
  2. on this machine (if the environment was made elsewhere, copy its site-packages/jax_plugins and
     site-packages/nvidia folders here, side by side):
     fedbayes backend install --from jaxenv/lib/python3.*/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so
  fedbayes links the plugin into %s and finds the NVIDIA libraries next to it (site-packages/nvidia).`,
			GoXLAVersion, dir)
	}
	v := CPUPluginVersion
	return fmt.Sprintf(`To install the CPU plugin by hand:
  1. download https://github.com/%s/releases/download/%s/%s
     (the CPU plugin %s that go-xla %s installs and was tested with)
  2. mkdir -p %s && tar -xzf %s -C %s
  3. fedbayes backend install --from %s/pjrt_c_api_cpu_%s_plugin.so
     (checks that it loads, and links pjrt_c_api_cpu_plugin.so to it)`,
		installer.BinaryCPUReleasesRepo, v, cpuAsset(), v, GoXLAVersion,
		dir, cpuAsset(), dir, dir, v)
}

// InstallError is the error of an Install that could not download: it carries the manual
// instructions.
type InstallError struct {
	Kind, Dir string
	Err       error
}

func (e *InstallError) Error() string {
	return fmt.Sprintf("cannot install the %s XLA plugin: %v\n\n%s", e.Kind, e.Err, ManualInstructions(e.Kind, e.Dir))
}

func (e *InstallError) Unwrap() error { return e.Err }

// Install downloads and installs a PJRT plugin with go-xla v0.1.4's own installer (CPUAutoInstall,
// CudaAutoInstall) into opts.Dir, then checks that the plugin loads (Probe). It does nothing when the
// plugin is already there. Offline, on a refusal or a timeout, it returns an *InstallError that names
// the file to fetch by hand and where to put it; it never leaves a half-written plugin where fedbayes
// looks (the installer writes to a temporary file first).
func Install(ctx context.Context, opts InstallOptions) (Plugin, error) {
	if opts.Kind != "cpu" && opts.Kind != "cuda" {
		return Plugin{}, fmt.Errorf("unknown plugin kind %q: want cpu or cuda", opts.Kind)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = Dir(); err != nil {
			return Plugin{}, err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Plugin{}, err
	}
	if opts.Kind == "cuda" && !opts.Force && !hasGPU() {
		return Plugin{}, fmt.Errorf("no NVIDIA GPU found on this machine (no /dev/nvidia*, no working nvidia-smi): " +
			"the CUDA plugin would not be used here; add -force to install it anyway")
	}
	transport := opts.Transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = opts.Timeout
		t.ResponseHeaderTimeout = 2 * opts.Timeout
		transport = t
	}

	// The network check: one request, bounded by Timeout.
	fmt.Fprintf(log, "Checking that %s can be reached (at most %s)...\n", probeURL(opts.Kind), opts.Timeout)
	if err := reach(ctx, transport, probeURL(opts.Kind), opts.Timeout); err != nil {
		return Plugin{}, &InstallError{Kind: opts.Kind, Dir: dir, Err: err}
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Plugin{}, fmt.Errorf("cannot create the plugin folder: %w (choose another with -dir or $%s)", err, DirEnv)
	}

	// go-xla's installer uses http.DefaultClient (and http.Get): give it the bounded transport.
	saved := http.DefaultClient
	http.DefaultClient = &http.Client{Transport: transport}
	defer func() { http.DefaultClient = saved }()
	fmt.Fprintf(log, "Installing the %s plugin into %s with go-xla %s's installer:\n", opts.Kind, dir, GoXLAVersion)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("go-xla installer: %v", r)
			}
		}()
		done <- runInstaller(opts.Kind, dir, opts.Force)
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		return Plugin{}, &InstallError{Kind: opts.Kind, Dir: dir, Err: fmt.Errorf("stopped: %w", ctx.Err())}
	}
	if err != nil {
		return Plugin{}, &InstallError{Kind: opts.Kind, Dir: dir, Err: err}
	}
	p := Plugin{Name: opts.Kind, Path: filepath.Join(dir, "pjrt_c_api_cpu_plugin.so"), Where: "fedbayes folder " + dir}
	if opts.Kind == "cuda" {
		p.Path = filepath.Join(dir, "nvidia", "pjrt_c_api_cuda_plugin.so")
	}
	if real, err := filepath.EvalSymlinks(p.Path); err == nil {
		p.Path = real
	}
	if _, err := Probe(p.Path); err != nil {
		return p, fmt.Errorf("installed, but the plugin does not load: %w", err)
	}
	return p, nil
}

// runInstaller calls go-xla's installer for kind into dir (go-xla's "lib/go-xla" folder).
func runInstaller(kind, dir string, force bool) error {
	if kind == "cpu" {
		return installer.CPUAutoInstall(dir, true, installer.Normal)
	}
	return installCUDA(dir, force)
}

// reach makes one GET request to url and reports why it failed: no network, a refusal (HTTP status),
// or no answer within timeout.
func reach(ctx context.Context, rt http.RoundTripper, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if tok := os.Getenv("GH_TOKEN"); tok != "" && req.URL.Host == "api.github.com" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no answer from %s within %s (offline, or a firewall drops the connection)", req.URL.Host, timeout)
		}
		return fmt.Errorf("cannot reach %s (offline?): %w", req.URL.Host, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if req.URL.Host == "api.github.com" && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) {
			hint = " (GitHub limits anonymous requests: set GH_TOKEN to a GitHub token and retry)"
		}
		return fmt.Errorf("%s refused the request: HTTP %s%s", req.URL.Host, resp.Status, hint)
	}
	return nil
}
