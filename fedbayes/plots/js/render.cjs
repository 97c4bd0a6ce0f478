// Server-side rendering of ECharts options to SVG files, used by fedbayes/plots (RenderSVG).
// Usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json
// JOBS.json is an array of {"name", "option", "width", "height", "out"}; each option is drawn with the
// SVG renderer, animation off, and written to "out". Errors name the job and exit with status 1.
// zrender numbers the ids and classes it writes (zr<instance>-c<n>, zr<instance>-cls-<n>) with
// counters shared by every chart of the process; they are numbered again per file, in order of first
// use, so that a file's bytes depend on its chart alone, not on the charts drawn before it.
"use strict";
const fs = require("fs");

const [echartsDir, jobsPath] = process.argv.slice(2);
if (!echartsDir || !jobsPath) {
  console.error("usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json");
  process.exit(2);
}
const echarts = require(echartsDir);

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
