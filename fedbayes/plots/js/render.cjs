// Server-side rendering of ECharts options to SVG files, used by fedbayes/plots (RenderSVG).
// Usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json [WIDTHS.json]
// WIDTHS.json ({"regular": [...], "bold": [...]}, the advance widths of ASCII 32-126 in thousandths of an
// em of the font viewers draw "sans-serif" with) replaces ECharts' text measure in Node (a table of
// narrower widths), so that legends, truncated text and axis labels are laid out at the widths they
// are drawn with; characters outside ASCII count 0.85 em, wide scripts 1 em (plots.TextWidth).
// JOBS.json is an array of {"name", "option", "width", "height", "out"}; each option is drawn with the
// SVG renderer, animation off, and written to "out". Errors name the job and exit with status 1.
// zrender numbers the ids and classes it writes (zr<instance>-c<n>, zr<instance>-cls-<n>) with
// counters shared by every chart of the process; they are numbered again per file, in order of first
// use, so that a file's bytes depend on its chart alone, not on the charts drawn before it.
"use strict";
const fs = require("fs");

const [echartsDir, jobsPath, widthsPath] = process.argv.slice(2);
if (!echartsDir || !jobsPath) {
  console.error("usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json [WIDTHS.json]");
  process.exit(2);
}
const echarts = require(echartsDir);
if (widthsPath && typeof echarts.setPlatformAPI === "function") {
  const widths = JSON.parse(fs.readFileSync(widthsPath, "utf8"));
  echarts.setPlatformAPI({
    measureText(text, font) {
      text = text || "";
      font = font || "12px sans-serif";
      const m = /((?:\d+)?\.?\d*)px/.exec(font);
      const size = (m && +m[1]) || 12;
      const table = /bold|[6-9]00/.test(font) ? widths.bold : widths.regular;
      let em = 0;
      for (const ch of text) {
        const c = ch.codePointAt(0);
        if (c >= 32 && c < 127) em += table[c - 32] / 1000;
        else if ((c >= 0x2e80 && c < 0xa000) || (c >= 0xac00 && c < 0xd7a4) || ch === "…" || ch === "—") em += 1;
        else if (c >= 0x300 && c < 0x370) em += 0;
        else em += 0.85;
      }
      return { width: em * size };
    },
  });
}

// renumberIds gives zrender's ids and classes in one SVG document numbers that start at 0.
function renumberIds(svg) {
  const names = new Map();
  const counts = { c: 0, "cls-": 0 };
  return svg.replace(/zr\d+-(cls-|c)\d+\b/g, (name, kind) => {
    if (!names.has(name)) names.set(name, `zr0-${kind}${counts[kind]++}`);
    return names.get(name);
  });
}
const jobs = JSON.parse(fs.readFileSync(jobsPath, "utf8"));
for (const job of jobs) {
  let chart;
  try {
    chart = echarts.init(null, null, {
      renderer: "svg",
      ssr: true,
      width: job.width,
      height: job.height,
    });
    chart.setOption(Object.assign({}, job.option, { animation: false }));
    fs.writeFileSync(job.out, renumberIds(chart.renderToSVGString()));
  } catch (err) {
    console.error(`chart ${JSON.stringify(job.name)}: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  } finally {
    if (chart) chart.dispose();
  }
}
console.log(`echarts ${echarts.version}: rendered ${jobs.length} chart(s)`);
