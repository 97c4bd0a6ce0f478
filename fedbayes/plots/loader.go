package plots

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ChartsDir is the folder, under a Jupyter server's notebook root, that holds the copy of the
// ECharts bundle notebook pages load (InstallLibraryCopy); git ignores it.
const ChartsDir = "_charts"

// LibraryFileName is the file name of the bundle's copy: one per ECharts version.
func LibraryFileName() string { return "echarts-" + EChartsVersion + ".min.js" }

// InstallLibraryCopy writes the ECharts bundle to root/_charts/echarts-VERSION.min.js (atomically;
// nothing is written when the copy is already there with the same size) and returns its path.
// root is the Jupyter server's notebook root (the repository's notebooks/ folder).
func InstallLibraryCopy(root string) (string, error) {
	js, err := EChartsBundle()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ChartsDir)
	path := filepath.Join(dir, LibraryFileName())
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(js)) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("plots: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".echarts-*.tmp")
	if err != nil {
		return "", fmt.Errorf("plots: %w", err)
	}
	_, werr := tmp.WriteString(js)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("plots: writing %s: %v", path, firstErr(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("plots: %w", err)
	}
	return path, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// LibraryLoaderHTML returns a small <script> element (about 1.5 kB, instead of the 1 MB bundle of
// LibraryHTML) that loads the bundle's copy from the Jupyter server, once per page: it fetches
// BASE/files/_charts/echarts-VERSION.min.js (then BASE/files/notebooks/_charts/..., for a server
// started at the repository root), where BASE is the page's data-base-url, runs it with define,
// exports and module hidden (as LibraryHTML does, so that RequireJS pages get window.echarts) and
// sends ReadyEvent. A saved notebook thus keeps only this loader. Without a server (an exported
// HTML file) nothing loads and each chart says how to load ECharts after 20 s.
func LibraryLoaderHTML() string {
	urls := []string{"files/" + ChartsDir + "/" + LibraryFileName(), "files/notebooks/" + ChartsDir + "/" + LibraryFileName()}
	return fmt.Sprintf(`<script data-fedbayes-echarts-loader=%q>
(function () {
  var ver = %q, ready = %q, urls = ["%s"];
  if (window.echarts && window.echarts.version === ver) { window.dispatchEvent(new Event(ready)); return; }
  if (window.fedbayesEChartsLoading) { return; }
  window.fedbayesEChartsLoading = true;
  var base = (document.body && document.body.getAttribute("data-base-url")) || "/";
  function attempt(i) {
    if (i >= urls.length) {
      window.fedbayesEChartsLoading = false;
      console.error("fedbayes: could not load ECharts from " + base + urls.join(" or " + base));
      return;
    }
    fetch(base + urls[i], {credentials: "same-origin"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (js) {
      (new Function("define", "exports", "module", js)).call(window);
      window.fedbayesEChartsLoading = false;
      window.dispatchEvent(new Event(ready));
    }).catch(function () { attempt(i + 1); });
  }
  attempt(0);
})();
</script>
`, EChartsVersion, EChartsVersion, ReadyEvent, strings.Join(urls, `", "`))
}
