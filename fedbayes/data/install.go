package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// debSource is a Debian package and the files one data folder takes from it.
type debSource struct {
	pkg    string   // Debian package
	folder string   // folder under the data directory
	prefix string   // folder inside the package
	files  []string // files copied from prefix
}

// debSources are what Install fetches: Fashion-MNIST from dataset-fashion-mnist and scikit-learn's
// bundled data files from python3-sklearn (only the data files: scikit-learn is not installed).
var debSources = []debSource{
	{pkg: "dataset-fashion-mnist", folder: "fashion-mnist", prefix: "usr/share/datasets/fashion-mnist",
		files: []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}},
	{pkg: "python3-sklearn", folder: SklearnDir, prefix: "usr/lib/python3/dist-packages/sklearn/datasets/data",
		files: []string{"digits.csv.gz", "iris.csv", "wine_data.csv", "breast_cancer.csv", "boston_house_prices.csv",
			"diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"}},
}

// ManifestFile is the name of the install record in the data directory.
const ManifestFile = "manifest.json"

// Manifest records what Install put in the data directory and where it came from.
type Manifest struct {
	// Folders maps a data folder ("fashion-mnist", "sklearn") to its record.
	Folders map[string]ManifestEntry `json:"folders"`
}

// ManifestEntry records one installed folder.
type ManifestEntry struct {
	// Package and Version are the Debian package the files came from.
	Package string `json:"package"`
	Version string `json:"version"`
	// Installed is when the folder was installed (UTC, RFC 3339).
	Installed string `json:"installed"`
	// Files lists the installed files with their sizes and SHA-256 digests.
	Files []ManifestFileEntry `json:"files"`
}

// ManifestFileEntry is one installed file.
type ManifestFileEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ReadManifest reads dir/manifest.json; a missing file gives an empty manifest.
func ReadManifest(dir string) (*Manifest, error) {
	m := &Manifest{Folders: map[string]ManifestEntry{}}
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := strictjson.Decode(raw, m); err != nil {
		return nil, fileErrorf(path, "corrupt manifest: %v", err)
	}
	if m.Folders == nil {
		m.Folders = map[string]ManifestEntry{}
	}
	return m, nil
}

// dataFileMode and dataDirMode are the modes of what Install writes, whatever the umask and the
// package's own modes: readable by every user, so that one data folder serves a shared machine and
// every user's check of the manifest and files can read them. Every run of Install also widens an
// installed file, folder or the manifest that lacks some of these bits (widenModes).
const (
	dataFileMode os.FileMode = 0o644
	dataDirMode  os.FileMode = 0o755
)

// write stores the manifest atomically (temporary file, then rename), readable by every user
// (0644): a shared data folder's users read it to check their files.
func (m *Manifest) write(dir string) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ManifestFile), append(raw, '\n'))
}

// writeFileAtomic writes data to path through a temporary file and a rename, with mode 0644
// whatever the umask (os.CreateTemp creates files 0600, which other users of a shared data folder
// could not read).
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	if err := f.Chmod(dataFileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// complete reports whether every file of the entry is in folder with its recorded size and SHA-256.
func (e ManifestEntry) complete(folder string, want []string) bool {
	if len(e.Files) == 0 {
		return false
	}
	recorded := map[string]ManifestFileEntry{}
	for _, f := range e.Files {
		recorded[f.Name] = f
	}
	for _, name := range want {
		rec, ok := recorded[name]
		if !ok || verifyFile(filepath.Join(folder, name), rec) != nil {
			return false
		}
	}
	return true
}

// installer does the work of Install; tests replace download.
type installer struct {
	// download fetches the .deb of pkg into folder and returns its path.
	download func(pkg, folder string, log io.Writer) (string, error)
}

// Install puts the datasets that Debian packages ship into dir (usually Dir()): Fashion-MNIST from
// dataset-fashion-mnist and scikit-learn's data files from python3-sklearn. Each package is fetched
// with `apt-get download` (no root needed) and unpacked with `dpkg-deb -x` into a temporary folder
// inside dir; only the data files are kept, moved into place with a rename, so an interrupted
// install never leaves half a dataset. The package versions and file digests are recorded in
// dir/manifest.json. A folder already installed is not fetched again, so a second run is quick;
// every run gives the manifest, the installed files and their folders at least modes 0644 and 0755.
func Install(dir string, log io.Writer) error {
	return installer{download: aptDownload}.install(dir, log)
}

func (in installer) install(dir string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("data install: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := os.Chmod(dir, dataDirMode); err != nil { // made here: readable whatever the umask
			return fmt.Errorf("data install: %w", err)
		}
	}
	// Leftovers of an interrupted install.
	if stale, _ := filepath.Glob(filepath.Join(dir, ".install-*")); len(stale) > 0 {
		for _, s := range stale {
			os.RemoveAll(s)
		}
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return fmt.Errorf("data install: %w", err)
	}
	for _, src := range debSources {
		folder := filepath.Join(dir, src.folder)
		if e, ok := m.Folders[src.folder]; ok && e.Package == src.pkg && e.complete(folder, src.files) {
			if err := widenModes(folder, src.files); err != nil {
				return fmt.Errorf("data install %s: %w", src.folder, err)
			}
			fmt.Fprintf(log, "%-14s already installed in %s (%s %s)\n", src.folder, folder, e.Package, e.Version)
			continue
		}
		start := time.Now()
		entry, err := in.installOne(dir, src, log)
		if err != nil {
			return fmt.Errorf("data install %s: %w", src.folder, err)
		}
		m.Folders[src.folder] = entry
		if err := m.write(dir); err != nil {
			return fmt.Errorf("data install: writing the manifest: %w", err)
		}
		fmt.Fprintf(log, "%-14s installed in %s from %s %s (%d files, %.1fs)\n",
			src.folder, folder, entry.Package, entry.Version, len(entry.Files), time.Since(start).Seconds())
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		if err := widenMode(filepath.Join(dir, ManifestFile), dataFileMode); err != nil {
			return fmt.Errorf("data install: %w", err)
		}
	}
	return nil
}

// widenModes gives an installed folder and its files at least dataDirMode and dataFileMode.
func widenModes(folder string, files []string) error {
	if err := widenMode(folder, dataDirMode); err != nil {
		return err
	}
	for _, name := range files {
		if err := widenMode(filepath.Join(folder, name), dataFileMode); err != nil {
			return err
		}
	}
	return nil
}

// widenMode adds the permission bits of want that path lacks (0600 becomes 0644 for want 0644), and
// leaves a mode that has them all unchanged; a file this user may not chmod is an error naming it.
func widenMode(path string, want os.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if perm&want == want {
		return nil
	}
	if err := os.Chmod(path, perm|want); err != nil {
		return fmt.Errorf("making %s readable by every user: %w", path, err)
	}
	return nil
}

// installOne fetches one package and moves its data files into dir/src.folder.
func (in installer) installOne(dir string, src debSource, log io.Writer) (ManifestEntry, error) {
	tmp, err := os.MkdirTemp(dir, ".install-"+src.folder+"-")
	if err != nil {
		return ManifestEntry{}, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(log, "%-14s fetching Debian package %s ...\n", src.folder, src.pkg)
	deb, err := in.download(src.pkg, tmp, log)
	if err != nil {
		return ManifestEntry{}, err
	}
	version, err := runOutput(tmp, "dpkg-deb", "-f", deb, "Version")
	if err != nil {
		return ManifestEntry{}, err
	}
	root := filepath.Join(tmp, "root")
	if _, err := runOutput(tmp, "dpkg-deb", "-x", deb, root); err != nil {
		return ManifestEntry{}, err
	}
	out := filepath.Join(tmp, "out")
	if err := os.Mkdir(out, dataDirMode); err != nil {
		return ManifestEntry{}, err
	}
	if err := os.Chmod(out, dataDirMode); err != nil { // whatever the umask
		return ManifestEntry{}, err
	}
	entry := ManifestEntry{Package: src.pkg, Version: strings.TrimSpace(version), Installed: time.Now().UTC().Format(time.RFC3339)}
	for _, name := range src.files {
		from := filepath.Join(root, filepath.FromSlash(src.prefix), name)
		to := filepath.Join(out, name)
		if err := os.Rename(from, to); err != nil {
			return ManifestEntry{}, fmt.Errorf("package %s %s has no %s/%s: %w", src.pkg, entry.Version, src.prefix, name, err)
		}
		if err := os.Chmod(to, dataFileMode); err != nil {
			return ManifestEntry{}, err
		}
		f, err := fileDigest(to)
		if err != nil {
			return ManifestEntry{}, err
		}
		entry.Files = append(entry.Files, f)
	}
	// Swap the folder in: the old copy (if any) moves aside first, then the new one takes its name.
	final := filepath.Join(dir, src.folder)
	if _, err := os.Stat(final); err == nil {
		if err := os.Rename(final, filepath.Join(tmp, "old")); err != nil {
			return ManifestEntry{}, err
		}
	}
	if err := os.Rename(out, final); err != nil {
		return ManifestEntry{}, err
	}
	return entry, nil
}

func fileDigest(path string) (ManifestFileEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return ManifestFileEntry{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return ManifestFileEntry{}, err
	}
	return ManifestFileEntry{Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// runOutput runs a command in folder and returns its standard output; a failure quotes its stderr.
func runOutput(folder, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = folder
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s not found: fedbayes installs its datasets from Debian packages and needs apt-get and dpkg-deb (Debian or Ubuntu)", name)
		}
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// aptDownload runs `apt-get download PKG` in folder. When apt does not know the package (empty or
// stale package lists) it runs `apt-get update` once if root, else says what to run.
func aptDownload(pkg, folder string, log io.Writer) (string, error) {
	_, err := runOutput(folder, "apt-get", "download", pkg)
	if err != nil && unknownPackage(err) {
		if os.Geteuid() != 0 {
			return "", fmt.Errorf("apt does not know package %s (package lists missing or stale): run `sudo apt-get update`, then install again: %w", pkg, err)
		}
		fmt.Fprintf(log, "%-14s apt does not know %s: running apt-get update\n", "", pkg)
		if _, errUpdate := runOutput(folder, "apt-get", "update"); errUpdate != nil {
			return "", fmt.Errorf("apt-get update: %w", errUpdate)
		}
		_, err = runOutput(folder, "apt-get", "download", pkg)
	}
	if err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(folder, pkg+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s left %d .deb files in %s, want 1", pkg, len(debs), folder)
	}
	return debs[0], nil
}

func unknownPackage(err error) bool {
	msg := err.Error()
	return slices.ContainsFunc([]string{"Unable to locate package", "has no installation candidate", "Can't select candidate"},
		func(s string) bool { return strings.Contains(msg, s) })
}
