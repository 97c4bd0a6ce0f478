package data

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// verifiedKey identifies one version of a file: its path, size and modification time.
type verifiedKey struct {
	path  string
	size  int64
	mtime time.Time
}

// verified caches the SHA-256 of files already hashed in this process, so that a dataset loaded
// once per run is hashed once per process. A file rewritten in place changes size or mtime and is
// hashed again.
var verified sync.Map // verifiedKey -> string (hex digest)

// fileSHA256 returns the file's SHA-256 (hex), from the cache when the file has not changed.
func fileSHA256(path string, st os.FileInfo) (string, error) {
	key := verifiedKey{path, st.Size(), st.ModTime()}
	if v, ok := verified.Load(key); ok {
		return v.(string), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fileErrorf(path, "reading: %v", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	verified.Store(key, sum)
	return sum, nil
}

// VerifyDataset checks the files of dataset name in dir against the SHA-256 digests that
// `fedbayes data install` recorded in dir/manifest.json: a file of a different size or content is
// reported as corrupt, naming the file. Files the manifest does not list (datasets the user copied in
// by hand) are not checked. Digests are cached per process by path, size and mtime.
func VerifyDataset(name, dir string) error {
	subs, files, _ := datasetFiles(name)
	if subs == nil {
		return nil
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		entry, ok := m.Folders[sub]
		if !ok || sub == "" {
			continue
		}
		recorded := map[string]ManifestFileEntry{}
		for _, f := range entry.Files {
			recorded[f.Name] = f
		}
		folder := filepath.Join(dir, sub)
		for _, want := range files {
			for _, cand := range []string{want, want + ".gz"} {
				rec, ok := recorded[cand]
				if !ok {
					continue
				}
				if err := verifyFile(filepath.Join(folder, cand), rec); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// verifyFile checks one file against its manifest record.
func verifyFile(path string, rec ManifestFileEntry) error {
	st, err := os.Stat(path)
	if err != nil {
		return fileErrorf(path, "listed in %s but cannot be read: %v; reinstall with `fedbayes data install`", ManifestFile, err)
	}
	if st.Size() != rec.Size {
		what := "corrupt"
		if st.Size() < rec.Size {
			what = "corrupt (truncated)"
		}
		return fileErrorf(path, "%s: %d bytes, %s records %d; remove the folder and run `fedbayes data install`",
			what, st.Size(), ManifestFile, rec.Size)
	}
	sum, err := fileSHA256(path, st)
	if err != nil {
		return err
	}
	if sum != rec.SHA256 {
		return fileErrorf(path, "corrupt: SHA-256 %s, %s records %s; remove the folder and run `fedbayes data install`",
			sum[:12]+"...", ManifestFile, shortDigest(rec.SHA256))
	}
	return nil
}

// shortDigest abbreviates a hex digest for a message.
func shortDigest(s string) string {
	if len(s) > 12 {
		return s[:12] + "..."
	}
	return s
}
