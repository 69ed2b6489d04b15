// The boxes of every figure's texts, measured in Debian's headless Chromium (tests/test_figure_layout.py).
//
// Loads a static page of figures (tools/figure_gallery.py's page: plotly.js, figures.js and each figure's
// book HTML, in a column as wide as the book's) at a laptop's width and at a phone's, waits until every
// figure is drawn (and, below the narrow width, laid out again by figures.js), and reports for each figure
// the boxes of its title, legend, annotations (subplot titles, line labels), axis titles, tick labels and
// slider, the figure's own box, its plot areas, and whether its legend scrolls. With "screenshots" set,
// each figure is also saved as a PNG ("scale": pixels per CSS pixel, default 1). A viewport with
// "theme": "dark" loads the page in the book's dark theme.
//
// Usage: node figure_boxes.mjs config.json   ->  writes config.out (JSON: {viewport: [{name, boxes...}]})
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function measure(page) {
  return page.evaluate(() => {
    const rect = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
    };
    const text = (el) => (el.textContent || "").trim();
    return [...document.querySelectorAll(".sd-figure")].map((box) => {
      const gd = box.querySelector(".js-plotly-plot");
      const items = [], seen = new Set();
      const add = (kind, el) => {
        if (seen.has(el)) return;
        seen.add(el);
        const r = rect(el);
        if (!(r.width > 0 && r.height > 0 && text(el))) return;
        const layer = el.closest("g.xaxislayer-above, g.yaxislayer-above"), plot = el.closest("g.subplot");
        const axis = layer ? layer.getAttribute("class") + " " + (plot ? plot.getAttribute("class") : "") : "";
        items.push({ kind, axis, text: text(el).slice(0, 80), ...r });
      };
      gd.querySelectorAll(".g-gtitle .gtitle, .g-gtitle .gtitle-subtitle").forEach((el) => add("title", el));
      gd.querySelectorAll(".legend .bg").forEach((el) => {
        const r = rect(el);
        if (r.width > 0 && r.height > 0) items.push({ kind: "legend", text: "legend", ...r });
      });
      gd.querySelectorAll(".annotation").forEach((el) => add("annotation", el));
      gd.querySelectorAll("[class*='title'] text[class$='title']").forEach((el) => {
        const cls = el.getAttribute("class");
        if (/^[xy]\d*title$/.test(cls)) add("axis-title", el);
      });
      gd.querySelectorAll("g.xaxislayer-above text, g.yaxislayer-above text").forEach((el) => add("tick", el));
      gd.querySelectorAll(".slider-container .slider-label, .slider-container .slider-group text").forEach(
        (el) => add("slider", el));
      gd.querySelectorAll(".colorbar .cbtitle text").forEach((el) => add("colorbar-title", el));
      // each subplot's plot area (where its data is drawn), from plotly's own axis offsets
      const g = rect(gd), plots = [];
      Object.entries(gd._fullLayout._plots || {}).forEach(([id, p]) => {
        const xa = p.xaxis, ya = p.yaxis;
        if (!xa || !ya || !xa._length || !ya._length) return;
        plots.push({ id, left: g.left + xa._offset, right: g.left + xa._offset + xa._length,
                     top: g.top + ya._offset, bottom: g.top + ya._offset + ya._length });
      });
      // a legend that scrolls (plotly gives it a scroll bar when its entries are taller than its room)
      const scrolls = [...gd.querySelectorAll(".legend .scrollbar")].some((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0;
      });
      // markers that the plot area's edge cuts: a point drawn (its centre inside the plot) whose box reaches
      // past the edge, in a trace that plotly clips to its axes (cliponaxis)
      const cutMarkers = [];
      gd.querySelectorAll("g.trace.scatter").forEach((el) => {
        const trace = el.__data__ && el.__data__[0] && el.__data__[0].trace;
        if (!trace || trace.visible !== true || trace.cliponaxis === false) return;
        const sub = (gd._fullLayout._plots || {})[(trace.xaxis || "x") + (trace.yaxis || "y")];
        if (!sub || !sub.xaxis || !sub.yaxis) return;
        const left = g.left + sub.xaxis._offset, right = left + sub.xaxis._length;
        const top = g.top + sub.yaxis._offset, bottom = top + sub.yaxis._length;
        const cut = [...el.querySelectorAll("path.point")].some((pt) => {
          const r = pt.getBoundingClientRect();
          if (!(r.width > 0 && r.height > 0)) return false;
          const cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
          if (cx < left || cx > right || cy < top || cy > bottom) return false;
          return r.left < left - 1 || r.right > right + 1 || r.top < top - 1 || r.bottom > bottom + 1;
        });
        if (cut) cutMarkers.push(String(trace.name || "").slice(0, 60));
      });
      return { name: box.dataset.name, figure: g, items, plots, legendScrolls: scrolls, cutMarkers };
    });
  });
}

const browser = await chromium.launch({ executablePath: config.chromium, args: ["--no-sandbox"] });
const report = {};
for (const view of config.viewports) {
  const context = await browser.newContext({ viewport: { width: view.width, height: 900 }, deviceScaleFactor: config.scale || 1 });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // a view with a theme ("dark") loads the page in it, as the book's theme switch leaves it
  await page.goto(config.url + "?w=" + view.column + (view.theme ? "&theme=" + view.theme : ""), { waitUntil: "load" });
  await page.waitForFunction(() => document.querySelectorAll(".sd-figure .main-svg").length >=
    document.querySelectorAll(".sd-figure").length, null, { timeout: 60000 });
  await sleep(1500);  // figures.js lays out narrow figures again after the first draw
  const figures = await measure(page);
  report[view.name] = { errors, figures };
  if (config.screenshots) {
    mkdirSync(config.screenshots, { recursive: true });
    const boxes = await page.$$(".sd-figure .js-plotly-plot");
    for (let i = 0; i < boxes.length; i++) {
      await boxes[i].screenshot({ path: join(config.screenshots, `${figures[i].name}-${view.name}.png`) });
    }
  }
  await context.close();
}
await browser.close();
writeFileSync(config.out, JSON.stringify(report));
