// Package plots draws fedbayes results as ECharts charts, built with go-echarts and rendered with
// no network: interactive in GoNB notebooks, in notebooks exported to HTML and in plain browser
// pages, and as static SVG and PNG figures for papers.
//
// # Charts
//
// A Chart is an ECharts option (plain JSON data) with a name and a size. Builders take plain data
// (slices and structs with JSON tags, so the engine can write them into a figure spec):
// ToyAggregation and ToyRules (densities of K univariate Gaussians under every rule, LP also as the
// exact mixture), LearningCurves, Retention, VersusLayers, VersusHeterogeneity and NLLVersusBeta
// (metric versus x, mean over seeds with a band of plus or minus one standard error),
// ReliabilityDiagram, LearnedSpread, PartitionHeatmap, DecompositionBars and ScatterChart.
// FromGoECharts wraps any go-echarts chart.
//
// # How ECharts gets into a page
//
// ECharts 6.1.0 comes from npm into a cache outside the repository (NPMDir, InstallCommand); it is
// never fetched from a CDN. The 1.1 MB bundle is inlined, once per page: a notebook calls
// DisplayLibrary in an early cell and then Display for each chart; PageHTML puts it once at the top
// of a standalone page. Inlining, rather than a <script src> to a file, is what survives every
// target: an exported notebook or a page opened elsewhere has no server and no relative file to
// load, and GoNB cells run as separate processes, so only the page itself can hold the library.
// Once per page, rather than once per chart, keeps notebooks small (one copy whatever the number of
// charts).
//
// Pages may or may not have RequireJS: exported notebooks load it, classic Notebook 6 does not
// expose it to cell output. The ECharts UMD bundle would register an AMD module when it sees
// define.amd and then never set window.echarts; LibraryHTML runs the bundle in a function whose
// define, exports and module parameters are undefined, so it always sets window.echarts and leaves
// the page's loader alone. It skips the bundle if the same version is already loaded and then
// sends the window event ReadyEvent. Each chart gets a random unique element id (NewID: cells are
// separate processes, so a counter would repeat) and draws at once if window.echarts exists,
// otherwise when ReadyEvent arrives; after 20 s it writes in its area how to load the library.
//
// # Static figures
//
// RenderSVG runs ECharts' server-side SVG renderer in Node.js (animation off) and SVGToPNG
// rasterises with headless Chromium; WriteFigures does both at a paper size (ColumnFigure,
// WideFigure). A SpecFile (figure-spec JSON, documented in docs/plots.md) lists figures by kind and
// data; `fedbayes figures` turns one into SVG and PNG files.
package plots
