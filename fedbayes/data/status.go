package data

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Availability says whether a dataset can be loaded from a data directory and, if not, how to get it.
type Availability struct {
	// Name is the dataset name, as Load takes it.
	Name string
	// Present reports whether all its files were found (by name; Load checks their content).
	Present bool
	// Path is the folder holding the files, or where they are expected.
	Path string
	// Source says where the files come from.
	Source string
	// Install is the exact command that installs the dataset, or what the user must do when it
	// cannot be downloaded here.
	Install string
	// Missing lists the files not found (empty when Present).
	Missing []string
	// Corrupt says which file does not match the SHA-256 recorded at install (Present is then false).
	Corrupt string `json:",omitempty"`
}

// datasetFiles returns the folders searched for a dataset (the first is where it belongs) and
// the files it needs.
func datasetFiles(name string) (folders, files []string, source string) {
	mnistNames := []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}
	switch {
	case name == "fashion-mnist":
		return []string{"fashion-mnist", ""}, mnistNames, "Debian package dataset-fashion-mnist"
	case name == "mnist":
		return []string{"mnist", ""}, mnistNames, "user-provided: http://yann.lecun.com/exdb/mnist/ (IDX files, raw or .gz)"
	case strings.HasPrefix(name, "emnist-"):
		p := "emnist-" + strings.TrimPrefix(name, "emnist-") + "-"
		return []string{filepath.Join("emnist", "gzip"), "emnist", "gzip", ""},
			[]string{p + "train-images-idx3-ubyte", p + "train-labels-idx1-ubyte", p + "test-images-idx3-ubyte", p + "test-labels-idx1-ubyte"},
			"user-provided: NIST's EMNIST gzip.zip (IDX files)"
	case name == "cifar10":
		return []string{"cifar-10-batches-bin", "cifar10", ""},
			[]string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"},
			"user-provided: cifar-10-binary.tar.gz (the binary version)"
	case name == "cifar100" || name == "cifar100-coarse":
		return []string{"cifar-100-binary", "cifar100", ""}, []string{"train.bin", "test.bin"},
			"user-provided: cifar-100-binary.tar.gz (the binary version)"
	case name == "svhn":
		return []string{"svhn", ""}, []string{"train_32x32.mat", "test_32x32.mat"},
			"user-provided: SVHN cropped digits (format 2) train_32x32.mat, test_32x32.mat"
	}
	if t, ok := sklearnTables[name]; ok {
		return []string{SklearnDir, ""}, t.files, "Debian package python3-sklearn (data files only)"
	}
	return nil, nil, ""
}

// Status reports, for every dataset name Load knows, whether its files are in dir and how to
// install them. Installed files are checked against the manifest's SHA-256 digests (VerifyDataset,
// hashed once per process); the others are only looked for by name.
func Status(dir string) []Availability {
	var out []Availability
	installCmd := "fedbayes data install"
	if dir != Dir() {
		installCmd += " -dir " + shellQuote(dir)
	}
	for _, name := range Names() {
		subs, files, source := datasetFiles(name)
		a := Availability{Name: name, Source: source, Path: filepath.Join(dir, subs[0])}
		// The dataset is present in the first folder that holds all its files.
		for _, sub := range subs {
			folder := filepath.Join(dir, sub)
			var missing []string
			for _, f := range files {
				if _, err := findFile([]string{folder}, f); err != nil {
					missing = append(missing, f)
				}
			}
			if len(missing) == 0 {
				a.Present, a.Path, a.Missing = true, folder, nil
				if err := VerifyDataset(name, dir); err != nil {
					a.Present, a.Corrupt = false, err.Error()
				}
				break
			}
			if sub == subs[0] {
				a.Missing = missing
			}
		}
		switch {
		case strings.HasPrefix(source, "Debian"):
			a.Install = installCmd
		default:
			a.Install = fmt.Sprintf("cannot be downloaded by fedbayes: copy %s into %s", strings.Join(files, ", "), a.Path)
		}
		out = append(out, a)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
