// Server-side rendering of ECharts options to SVG files, used by fedbayes/plots (RenderSVG).
// Usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json
// JOBS.json is an array of {"name", "option", "width", "height", "out"}; each option is drawn with the
// SVG renderer, animation off, and written to "out". Errors name the job and exit with status 1.
"use strict";
const fs = require("fs");

const [echartsDir, jobsPath] = process.argv.slice(2);
if (!echartsDir || !jobsPath) {
  console.error("usage: node render.cjs ECHARTS_PACKAGE_DIR JOBS.json");
  process.exit(2);
}
const echarts = require(echartsDir);
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
    fs.writeFileSync(job.out, chart.renderToSVGString());
  } catch (err) {
    console.error(`chart ${JSON.stringify(job.name)}: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  } finally {
    if (chart) chart.dispose();
  }
}
console.log(`echarts ${echarts.version}: rendered ${jobs.length} chart(s)`);
