package backend

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// FromOptions configures InstallFrom.
type FromOptions struct {
	// Dir is the folder to install into; "" means Dir().
	Dir string
	// Name is the plugin's platform name ("cpu", "cuda"); "" derives it from the file name.
	Name string
	// Copy copies the file instead of linking to it. A CUDA plugin from a Python environment should be
	// linked: it finds the NVIDIA libraries relative to its own folder.
	Copy bool
}

// InstallFrom installs a PJRT plugin file the user already has (for example jax-cuda13-pjrt's
// xla_cuda_plugin.so from a Python environment, or an unpacked CPU plugin): it checks that src loads as
// a PJRT plugin of a major API version go-xla v0.1.4 can use (Probe), then links (or copies) it into
// the plugin folder as pjrt_c_api_<name>_plugin.so, replacing any previous one atomically. Any other
// file is rejected with a message that says why, and nothing is written.
func InstallFrom(src string, opts FromOptions) (Plugin, APIVersion, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return Plugin{}, APIVersion{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	v, err := Probe(abs)
	if err != nil {
		return Plugin{}, APIVersion{}, fmt.Errorf("not installed: %w", err)
	}
	if ok, why := v.Compatible(); !ok {
		return Plugin{}, v, fmt.Errorf("not installed: %s: %s", abs, why)
	}
	name := opts.Name
	if name == "" {
		name = pluginName(abs)
	}
	if !validName.MatchString(name) {
		return Plugin{}, v, fmt.Errorf("cannot tell the platform of %s from its name: give it with -name (cpu, cuda, ...)", abs)
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = Dir(); err != nil {
			return Plugin{}, v, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return Plugin{}, v, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Plugin{}, v, fmt.Errorf("cannot create the plugin folder: %w (choose another with -dir or $%s)", err, DirEnv)
	}
	dest := filepath.Join(dir, "pjrt_c_api_"+name+"_plugin.so")
	if real, err := filepath.EvalSymlinks(dest); err == nil && real == abs {
		return Plugin{Name: name, Path: abs, Where: "fedbayes folder " + dir}, v, nil // already installed
	}
	tmp := filepath.Join(dir, ".tmp-"+filepath.Base(dest)+fmt.Sprint(os.Getpid()))
	_ = os.Remove(tmp)
	if opts.Copy {
		err = copyFile(abs, tmp)
	} else {
		err = os.Symlink(abs, tmp)
	}
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return Plugin{}, v, fmt.Errorf("cannot install %s as %s: %w", abs, dest, err)
	}
	p := Plugin{Name: name, Path: abs, Where: "fedbayes folder " + dir}
	if opts.Copy {
		p.Path = dest
	}
	return p, v, nil
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
