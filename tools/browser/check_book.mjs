// Every page of the built book in Debian's headless Chromium, in one pass: each page is loaded
// twice (at a desktop's width in light mode, at a phone's in dark mode), and the checks of the three
// modes (light, dark on the pages of config.darkPages, phone) run on those two loads.
//
//   light  JavaScript and console errors, requests outside the book, failed local requests;
//          axe-core (WCAG 2.1 A/AA) on the settled page; each figure's name, description and data
//          tables; ONE keyboard walk from the top that records every tab stop (formulas as stops,
//          visible focus, the range inputs) and, at each figure's slider control, moves it with the
//          arrow keys, End and Home; the page switched to dark and back (each figure's theme and
//          contrasts); then, with every folded part opened, math typeset, widgets rendered,
//          figures drawn, display formulas wider than their column, each slider moved by the
//          mouse, and a screenshot (when config.screenshots names a folder).
//   dark   on the same load, after the keyboard walk, on the pages of config.darkPages (every page when it is
//          null): the reader's system turns dark (the theme's "auto" mode follows it in place), axe-core on
//          the settled page, and back to light.
//   phone  390 CSS pixels, touch, in a browser that prefers dark: the figures come up dark by themselves,
//          and in that dark mode axe-core on the settled page, display formulas that overflow, the "Back to
//          top" button; with every folded part opened, the layout (sideways scroll, each plot's share of its
//          figure, text cut at a figure's edge) and a screenshot (when asked).
//
// Usage: node check_book.mjs config.json   (written by tests/browser_support.py)
// Requests to the book's own server go through; requests to the CDN assets named in
// config.assets are answered from local copies; every other request is blocked and reported,
// so the book cannot silently depend on anything it does not name.
// Each report carries ms: how long each stage took, per page and mode.
import { readFileSync, writeFileSync, appendFileSync, mkdirSync, existsSync } from "node:fs";
import { join, extname } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const DRAW_MS = config.drawTimeoutMs || 20000;
const SLIDER_MS = config.sliderTimeoutMs || 8000;
const MIME = {
  ".js": "application/javascript", ".css": "text/css", ".json": "application/json",
  ".svg": "image/svg+xml", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
  ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject", ".png": "image/png", ".map": "application/json",
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const errorText = (e, n = 1000) => String(e && e.stack ? e.stack : e).slice(0, n);

function localFileFor(url) {
  const bare = url.split("#")[0].split("?")[0];
  for (const a of config.assets) {
    if (a.url && bare === a.url) return a.file;
    if (a.prefix && bare.startsWith(a.prefix)) return join(a.dir, decodeURIComponent(bare.slice(a.prefix.length)));
  }
  return null;
}

async function routeOffline(page, external) {
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith(config.baseUrl) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    const file = localFileFor(url);
    if (file && existsSync(file)) {
      return route.fulfill({
        status: 200, path: file, contentType: MIME[extname(file)] || "application/octet-stream",
        headers: { "access-control-allow-origin": "*" },
      });
    }
    external.push(file ? `${url} (named, but the local copy ${file} is missing)` : url);
    return route.abort("blockedbyclient");
  });
}

// Wait for a condition evaluated in the page; false when time is up (the checks then report it).
async function until(page, fn, arg, timeout, polling = 50) {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling });
    return true;
  } catch (e) {
    if (e && e.name === "TimeoutError") return false;
    throw e;
  }
}

// --- evaluated inside the page: the page settles ----------------------------------------------
// MathJax has typeset and every plotly figure is drawn (or time is up); then the theme's catch-up.
// (A page that neither loads MathJax nor configures it has no MathJax to wait for: after the load
// event every script it names has run.)
async function pageSettled(timeoutMs) {
  const t0 = Date.now();
  const named = window.MathJax || document.querySelector('script[src*="mathjax" i]');
  while (named && !(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) && Date.now() - t0 < 15000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (window.MathJax && window.MathJax.startup) await window.MathJax.startup.promise;
  const drawn = () => [...document.querySelectorAll(".plotly-graph-div")].every((gd) => gd._fullLayout);
  while (!drawn() && Date.now() - t0 < timeoutMs) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
  // The theme makes each scrolling code block and output a tab stop 300 ms after the page last
  // changed (a resize, figures redrawn): wait for that too, so the audit sees the page a reader
  // gets once it is still, not a moment the theme has not caught up with. A region that stays
  // out of the tab order is still reported by axe.
  const SCROLLERS = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container";
  const behind = () => [...document.querySelectorAll(SCROLLERS)].some(
    (el) => (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) && el.tabIndex < 0);
  const t1 = Date.now();
  while (behind() && Date.now() - t1 < 10000) await new Promise((r) => setTimeout(r, 100));
  return { theme: document.documentElement.dataset.theme || null };
}

// Every figure drawn and set up by figures.js; a figure it never set up counts as such after lateMs.
function figuresReady(lateMs) {
  const gds = [...document.querySelectorAll(".plotly-graph-div")];
  const late = performance.now() > lateMs;
  return gds.every((gd) => gd._fullLayout && (late || (gd.getAttribute("data-sd-init") && gd._sdThemeBusy)));
}

// Every figure's theme relayouts done: their promises, until no new one is queued, then two frames.
async function figuresSettled() {
  const gds = [...document.querySelectorAll(".plotly-graph-div")];
  for (let i = 0; i < 50; i++) {
    const busy = gds.map((gd) => gd._sdThemeBusy || null);
    await Promise.all(busy);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    if (gds.every((gd, j) => (gd._sdThemeBusy || null) === busy[j])) break;
  }
  return gds.length;
}

// --- axe-core ----------------------------------------------------------------------------------
// Where a node is: the theme's chrome, the book's own content, or inside a plotly figure.
async function runAxe(tags) {
  const results = await window.axe.run(document, {
    runOnly: { type: "tag", values: tags }, resultTypes: ["violations"], elementRef: true,
  });
  const where = (el) => {
    if (!el || !el.closest) return "theme";
    if (el.closest(".plotly-graph-div, .js-plotly-plot")) return "plot";
    if (el.closest("article.bd-article, .bd-article, #main-content article")) return "content";
    return "theme";
  };
  const out = [];
  for (const v of results.violations) {
    for (const n of v.nodes) {
      out.push({
        rule: v.id, impact: n.impact, where: where(n.element), target: n.target.map(String).join(" "),
        html: n.html.slice(0, 200), summary: (n.failureSummary || "").slice(0, 300),
      });
    }
  }
  return { version: window.axe.version, nodes: out };
}

async function audit(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.addScriptTag({ path: config.axe });
  return page.evaluate(runAxe, config.tags);
}

// --- reading: math, widgets, figures drawn, sliders by mouse, phone layout --------------------
async function waitForMath() {
  const nodes = [...document.querySelectorAll(".math")].filter((e) => !e.closest("pre, code"));
  if (nodes.length === 0) return { expected: 0, typeset: 0, errors: [], raw: [] };
  const t0 = Date.now();
  const named = window.MathJax || document.querySelector('script[src*="mathjax" i]');
  while (named && !(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) && Date.now() - t0 < 15000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) {
    return { expected: nodes.length, typeset: 0, errors: ["MathJax never loaded"], raw: [] };
  }
  await window.MathJax.startup.promise;
  const typeset = nodes.filter((e) => e.querySelector("mjx-container")).length;
  const raw = nodes.filter((e) => !e.querySelector("mjx-container")).slice(0, 5).map((e) => e.textContent.slice(0, 80));
  const errors = [...document.querySelectorAll("mjx-merror")].slice(0, 5)
    .map((e) => e.getAttribute("data-mjx-error") || e.textContent.slice(0, 80));
  return { expected: nodes.length, typeset, errors, raw };
}

function figureStates(only) {
  const toArray = (v) => (v && typeof v === "object" && ArrayBuffer.isView(v) ? Array.from(v) : v);
  return [...document.querySelectorAll(".plotly-graph-div")].map((gd, index) => {
    if (only !== undefined && only !== null && index !== only) return null;
    const full = gd._fullData || [];
    const visible = full.filter((t) => t.visible === true);
    const data = JSON.stringify(visible.map((t) => [t.type, toArray(t.x), toArray(t.y), toArray(t.z), toArray(t.values)]));
    // The first SVG holds the plot area and axes; sliders and legends live in the last one.
    const svg = gd.querySelector(".main-svg");
    const box = gd.getBoundingClientRect();
    const sliders = (gd._fullLayout && gd.layout.sliders) || [];
    return {
      index, id: gd.id,
      drawn: Boolean(gd._fullLayout && svg && visible.length > 0 && box.width > 0 && box.height > 0),
      traces: full.length, visibleTraces: visible.length, width: box.width,
      data, plotted: svg ? svg.innerHTML : "",
      sliders: sliders.map((s) => ({ steps: s.steps.length, active: s.active || 0 })),
    };
  });
}

function allDrawn() {
  return [...document.querySelectorAll(".plotly-graph-div")].every((gd) => {
    const svg = gd.querySelector(".main-svg"), box = gd.getBoundingClientRect();
    return gd._fullLayout && svg && (gd._fullData || []).some((t) => t.visible === true) && box.width > 0 && box.height > 0;
  });
}

// A figure's data or drawing differs from what it was (the slider moved it).
function figureMoved([index, data, plotted]) {
  const toArray = (v) => (v && typeof v === "object" && ArrayBuffer.isView(v) ? Array.from(v) : v);
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const visible = (gd._fullData || []).filter((t) => t.visible === true);
  const now = JSON.stringify(visible.map((t) => [t.type, toArray(t.x), toArray(t.y), toArray(t.z), toArray(t.values)]));
  const svg = gd.querySelector(".main-svg");
  return now !== data && (svg ? svg.innerHTML : "") !== plotted;
}

function widgetState() {
  const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  const rendered = views.filter((s) => s.parentElement && s.parentElement.querySelector(".jupyter-widgets, .widget-subarea *"));
  return { views: views.length, rendered: rendered.length };
}

// Bring the figure to the middle of the window and say where a mouse sets its slider to `step`: on the
// figure's range input (figures.js), where a range input's thumb stands at that value (Chromium's thumb is
// 16 px wide); else on plotly's own slider (a figure figures.js did not set up).
async function sliderGeometry([index, step]) {
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const input = (gd.closest(".sd-figure") || gd.parentElement).querySelector(".sd-slider input[type=range]");
  (input || gd).scrollIntoView({ block: "center", behavior: "instant" });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  if (input) {
    const r = input.getBoundingClientRect(), max = Number(input.max) || 1, thumb = 16;
    if (r.width === 0) return null;
    return { x: r.left + thumb / 2 + (r.width - thumb) * step / max, y: r.top + r.height / 2, input: input.id, max };
  }
  const ticks = gd.querySelectorAll(".slider-container .slider-tick-rect");
  const rail = gd.querySelector(".slider-container .slider-rail-touch-rect");
  if (!rail || ticks.length <= step) return null;
  const t = ticks[step].getBoundingClientRect();
  const r = rail.getBoundingClientRect();
  return { x: t.left + t.width / 2, y: r.top + r.height / 2, ticks: ticks.length };
}

function sliderStepProgrammatically([index, step]) {
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const s = gd.layout.sliders[0].steps[step];
  return window.Plotly[s.method](gd, ...s.args).then(() => true);
}

// Every step of a figure's sliders, every button of its menus and every frame, applied one after the
// other as a reader would (a slider through its range input, where figures.js made one), with the title
// the reader then reads (the SVG text plotly drew) and the title that step sets (plotly.js 4 reads
// "title.text" or a title object; a bare string is read as no title at all). A step that sets no title
// keeps the one before it. Then the figure goes back to its authored step.
async function stepTitles([index, waitMs]) {
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const box = gd.closest(".sd-figure") || gd.parentElement;
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const flat = (s) => {
    const d = document.createElement("div");
    d.innerHTML = String(s === null || s === undefined ? "" : s).replace(/<br\s*\/?>/gi, " ");
    return d.textContent.replace(/[\s\u200b]+/g, ""); // plotly sets zero-width spaces around <sub>, <sup>
  };
  const shown = () => {
    // on a narrow screen figures.js draws a title's "<br><sup>" part as plotly's subtitle, under it
    const el = gd.querySelector(".g-gtitle .gtitle"), sub = gd.querySelector(".g-gtitle .gtitle-subtitle");
    return (el ? el.textContent : "") + (sub ? sub.textContent : "");
  };
  const ownTitle = (layout) => {
    if (!layout || typeof layout !== "object") return undefined;
    if ("title.text" in layout) return layout["title.text"];
    if ("title" in layout) return layout.title && typeof layout.title === "object" ? layout.title.text : layout.title;
    return undefined;
  };
  const L = gd.layout, out = [];
  const controls = [];
  (L.sliders || []).forEach((sl, k) => (sl.steps || []).forEach((st, i) => controls.push({ kind: "slider", k, i, st })));
  (L.updatemenus || []).forEach((m, k) => (m.buttons || []).forEach((st, i) => controls.push({ kind: "button", k, i, st })));
  (gd._transitionData && gd._transitionData._frames || []).forEach((f, i) =>
    controls.push({ kind: "frame", k: 0, i, st: { method: "animate", args: [[f.name]], frameLayout: f.layout } }));
  let before = shown();
  const first = before;
  for (const c of controls) {
    const { st } = c;
    const args = st.args || [];
    const own = st.frameLayout !== undefined ? ownTitle(st.frameLayout)
      : ownTitle(st.method === "update" ? args[1] : st.method === "relayout" ? args[0] : undefined);
    // what plotly.js 4 makes of it: a string under "title" is no title
    const bare = st.frameLayout === undefined && own !== undefined && !("title.text" in ((st.method === "update" ? args[1] : args[0]) || {}))
      && typeof ((st.method === "update" ? args[1] : args[0]) || {}).title === "string";
    const expected = own === undefined ? before : own;
    const input = c.kind === "slider" ? box.querySelector(`[id="${gd.id}-slider-${c.k}"]`) : null;
    let how;
    try {
      if (input) {
        how = "range input";
        input.value = c.i;
        input.dispatchEvent(new Event("input", { bubbles: true }));
      } else if (c.kind === "frame") {
        how = "animate";
        await window.Plotly.animate(gd, args[0], { mode: "immediate", frame: { duration: 0, redraw: true }, transition: { duration: 0 } });
      } else {
        how = `Plotly.${st.method}`;
        await window.Plotly[st.method](gd, ...args);
        const act = {};
        act[`${c.kind === "slider" ? "sliders" : "updatemenus"}[${c.k}].active`] = c.i;
        await window.Plotly.relayout(gd, act);
      }
    } catch (e) {
      out.push({ ...c, st: undefined, label: st.label ?? null, how, error: String(e).slice(0, 200) });
      continue;
    }
    const t0 = Date.now();
    const done = () => {
      const at = c.kind === "slider" ? (gd.layout.sliders[c.k].active || 0) === c.i : true;
      return at && flat(shown()) === flat(expected);
    };
    while (!done() && Date.now() - t0 < waitMs) await new Promise((r) => setTimeout(r, 25));
    await frame();
    const now = shown();
    out.push({ kind: c.kind, k: c.k, i: c.i, label: st.label ?? null, how, bare,
      expected: flat(expected) ? String(expected).slice(0, 300) : null, shown: now.slice(0, 300),
      same: flat(now) === flat(expected), present: flat(now) !== "" });
    before = now;
  }
  // back to the authored step
  for (const [k, sl] of (L.sliders || []).entries()) {
    const input = box.querySelector(`[id="${gd.id}-slider-${k}"]`), a = sl.active || 0, st = sl.steps[a];
    if (input) { input.value = a; input.dispatchEvent(new Event("input", { bubbles: true })); }
    else if (st) {
      await window.Plotly[st.method](gd, ...(st.args || []));
      await window.Plotly.relayout(gd, { [`sliders[${k}].active`]: a });
    }
    const t0 = Date.now();
    while ((gd.layout.sliders[k].active || 0) !== a && Date.now() - t0 < waitMs) await new Promise((r) => setTimeout(r, 25));
  }
  await frame();
  return { index, first: first.slice(0, 300), steps: out };
}

// At a phone's width: does the page scroll sideways, and how much room do figures give their plots?
function phoneLayout() {
  const doc = document.documentElement;
  const inside = (r, box) => r.width === 0
    || (r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1);
  const figures = [...document.querySelectorAll(".plotly-graph-div")].map((gd, index) => {
    const box = gd.getBoundingClientRect();
    const size = (gd._fullLayout && gd._fullLayout._size) || { w: 0 };
    // Every piece of text plotly draws outside the plot area (titles, legend, annotations).
    const texts = [...gd.querySelectorAll(".g-gtitle text, .legend text, .annotation-text, .g-xtitle text, .g-ytitle text")];
    const cut = texts.filter((t) => !inside(t.getBoundingClientRect(), box)).map((t) => t.textContent.slice(0, 60));
    // a figure taller than the block that holds it would draw over the text below it
    const holder = (gd.closest(".output, .cell_output") || gd.parentElement).getBoundingClientRect();
    const spills = box.bottom > holder.bottom + 1;
    return {
      index, top: Math.round(box.top + window.scrollY), height: Math.round(box.height), width: Math.round(box.width),
      plotWidth: Math.round(size.w), hidden: box.width === 0, cut, spills,
    };
  });
  return { viewport: window.innerWidth, scrollWidth: doc.scrollWidth, figures };
}

// Figures may relayout themselves for the narrow screen after their first draw: the layout once
// it is the same twice 250 ms apart (5 s at most).
async function steadyPhoneLayout(measure) {
  const fn = new Function(`return (${measure})();`);
  let last = JSON.stringify(fn());
  for (let tries = 0; tries < 20; tries++) {
    await new Promise((r) => setTimeout(r, 250));
    const again = JSON.stringify(fn());
    if (again === last) break;
    last = again;
  }
  return JSON.parse(last);
}

// Every visible table cell a reader cannot see whole, at the load's width: its content wider than
// the cell, or the cell past the inner edge of the box that clips it (the nearest ancestor whose
// overflow is not visible; else the viewport). With each: whether that box scrolls, and whether it
// is a figure's data table (a keyboard-focusable scroll box by design). At most 40 cells, and the count.
function clippedCells() {
  const cells = [];
  let tables = 0;
  let count = 0;
  document.querySelectorAll("table").forEach((table, index) => {
    if (table.getBoundingClientRect().width === 0) return;
    tables++;
    let clip = table.parentElement;
    while (clip && clip !== document.body && getComputedStyle(clip).overflowX === "visible") clip = clip.parentElement;
    const boxed = Boolean(clip && clip !== document.body);
    const edge = boxed ? clip.getBoundingClientRect().left + clip.clientLeft + clip.clientWidth
      : document.documentElement.clientWidth;
    const scrolls = boxed && ["auto", "scroll"].includes(getComputedStyle(clip).overflowX);
    const dataTable = boxed && clip.classList.contains("sd-table-scroll");
    for (const cell of table.querySelectorAll("th, td")) {
      const r = cell.getBoundingClientRect();
      if (r.width === 0) continue;
      const overflows = cell.scrollWidth > cell.clientWidth + 1;
      const past = r.right > edge + 1;
      if (!overflows && !past) continue;
      count++;
      if (cells.length < 40) cells.push({ table: index, text: cell.textContent.trim().slice(0, 60), overflows, past, scrolls, dataTable });
    }
  });
  return { viewport: window.innerWidth, tables, count, cells };
}

// At a phone's width: each display formula, whether it overflows, and how a reader can scroll it.
function displayMath() {
  return [...document.querySelectorAll("mjx-container[display='true']")].map((mjx) => {
    const box = mjx.closest("div.math, .math") || mjx.parentElement;
    const scroller = [mjx, box].find((e) => e && e.scrollWidth > e.clientWidth + 1
      && ["auto", "scroll"].includes(getComputedStyle(e).overflowX));
    const overflows = mjx.scrollWidth > mjx.clientWidth + 1 || box.scrollWidth > box.clientWidth + 1
      || mjx.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
    const mml = mjx.querySelector("mjx-assistive-mml");
    return {
      overflows,
      text: (mml ? mml.textContent : mjx.textContent).replace(/\s+/g, " ").trim().slice(0, 60),
      scrolls: Boolean(scroller),
      focusable: Boolean(scroller && scroller.tabIndex >= 0),
      labelled: Boolean(scroller && (scroller.getAttribute("aria-label") || scroller.getAttribute("aria-labelledby"))),
      spills: box.getBoundingClientRect().right > document.documentElement.clientWidth + 1,
    };
  });
}

// The theme's "Back to top" button, which shows when the reader scrolls back up a long page: its
// box once it is shown and still (null when it does not show within a second).
async function backToTop() {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  window.scrollTo(0, Math.min(3000, document.documentElement.scrollHeight));
  await wait(300); // the theme watches scrolling down, then up
  window.scrollBy(0, -400);
  const b = document.getElementById("pst-back-to-top");
  const shown = () => b && getComputedStyle(b).display !== "none";
  const t0 = Date.now();
  while (!shown() && Date.now() - t0 < 1000) await wait(50);
  if (!shown()) return null;
  const box = () => JSON.stringify(b.getBoundingClientRect());
  let last = box();
  for (let i = 0; i < 60; i++) { await frame(); await frame(); const now = box(); if (now === last) break; last = now; }
  const r = b.getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height,
    viewport: [window.innerWidth, window.innerHeight] };
}

// --- figures: what a screen reader and a dark-mode reader meet ---------------------------------
function scriptsLoaded() {
  const inline = [...document.querySelectorAll("script:not([src])")];
  return {
    files: document.querySelectorAll('script[src*="sd-figures.js"]').length,
    styles: document.querySelectorAll('link[href*="sd-figures.css"]').length,
    inlineCopies: inline.filter((s) => s.textContent.includes("function wrapLine")).length,
    defined: Boolean(window.sdFigures),
  };
}

// Everything about one figure a test compares, read from the page (index among the plotly plots).
function figureFacts(index) {
  const decode = (v) => {
    if (v && typeof v === "object" && v.bdata) {
      const bin = atob(v.bdata), buf = new ArrayBuffer(bin.length), u8 = new Uint8Array(buf);
      for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
      const T = { f8: Float64Array, f4: Float32Array, i1: Int8Array, i2: Int16Array, i4: Int32Array,
        u1: Uint8Array, u2: Uint16Array, u4: Uint32Array }[v.dtype];
      const flat = Array.from(new T(buf));
      const shape = String(v.shape || "").split(",").map(Number);
      if (shape.length < 2) return flat;
      const [rows, cols] = shape;
      return Array.from({ length: rows }, (_, r) => flat.slice(r * cols, (r + 1) * cols));
    }
    if (v && typeof v === "object" && ArrayBuffer.isView(v)) return Array.from(v);
    if (Array.isArray(v)) return v.map((x) => (x && typeof x === "object" && (x.bdata || ArrayBuffer.isView(x)) ? decode(x) : x));
    return v;
  };
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const box = gd.closest(".sd-figure") || gd.parentElement, fig = gd.closest("figure");
  const cap = fig && fig.querySelector("figcaption .caption-number");
  const descId = gd.getAttribute("aria-describedby");
  const desc = descId && document.getElementById(descId);
  const summary = box.querySelector(".sd-figure-data > summary");
  const tables = [...box.querySelectorAll(".sd-figure-data table")].map((t) => {
    const step = t.closest(".sd-step-data");
    return {
      traces: (t.getAttribute("data-sd-traces") || "").split(",").filter(Boolean).map(Number),
      kind: t.getAttribute("data-sd-kind"),
      columns: (t.getAttribute("data-sd-columns") || "").split(",").filter(Boolean).map(Number),
      step: step ? Number(step.getAttribute("data-sd-step")) : null,
      shown: !step || !step.hidden,
      head: [...t.querySelectorAll("thead th")].map((c) => c.textContent),
      rows: [...t.querySelectorAll("tbody tr")].map((r) => ({ i: Number(r.getAttribute("data-i")),
        cells: [...r.children].map((c) => c.textContent) })),
    };
  });
  const full = gd._fullLayout;
  // each step's title as plain text (null: the step sets none), as a screen reader hears it with the step
  const plainTitle = (t) => {
    const d = document.createElement("div");
    // as figures.js reads a title aloud (and specdec_lite.figure_data.plain): E[N<sub>rej</sub>] is E[N_rej]
    d.innerHTML = String(t).replace(/<br\s*\/?>/gi, " ").replace(/<sub>/gi, "_");
    return d.textContent.replace(/\s+/g, " ").trim();
  };
  const stepTitle = (st) => {
    const L = (st.method === "relayout" ? (st.args || [])[0] : (st.args || [])[1]) || {};
    const t = typeof L["title.text"] === "string" ? L["title.text"]
      : L.title && typeof L.title === "object" && typeof L.title.text === "string" ? L.title.text : null;
    return t === null ? null : plainTitle(t);
  };
  // plotly's sliders as the layout holds them (plotly leaves a hidden one out of its full layout)
  const sliders = (gd.layout.sliders || []).map((s) => ({ active: s.active || 0, labels: s.steps.map((st) => st.label),
    prefix: (s.currentvalue && s.currentvalue.prefix) || "", titles: s.steps.map(stepTitle) }));
  // plotly's own sliders as drawn (a slider's group holds its rail)
  const drawnSliders = [...gd.querySelectorAll(".slider-container .slider-group")]
    .filter((g) => g.getBoundingClientRect().width > 0).length;
  const controls = [...box.querySelectorAll(".sd-slider input[type=range]")].map((i) => {
    const out = i.parentElement.querySelector("output"), r = out ? out.getBoundingClientRect() : { width: 0 };
    return {
      id: i.id, value: Number(i.value), max: Number(i.max), valuetext: i.getAttribute("aria-valuetext"),
      label: i.labels && i.labels[0] ? i.labels[0].textContent : "",
      readout: out ? out.textContent : null, readoutShown: r.width > 0 && getComputedStyle(out).visibility !== "hidden",
    };
  });
  const svgs = [...gd.querySelectorAll("svg")];
  const heat = {};
  (gd.data || []).forEach((t) => { if (t.type === "heatmap") heat[(t.xaxis || "x") + (t.yaxis || "y")] = true; });
  const colours = [];
  (gd._fullData || []).forEach((t) => {
    if (t.visible !== true || heat[(t.xaxis || "x") + (t.yaxis || "y")] || t.type === "heatmap") return;
    const opaque = (t.opacity === undefined || t.opacity === 1);
    // a marker is drawn in its colour (an open one too); an outline only edges it, and a bar's
    // outline only separates bars (plotly draws it in the plot's background colour)
    const cs = [t.line && t.line.color, t.marker && t.marker.color];
    cs.forEach((c) => {
      if (typeof c === "string" && opaque && !(t.line && t.line.width === 0 && c === t.line.color)) colours.push([t.name || "", c]);
    });
  });
  const text = [full.font.color];
  return {
    index, id: gd.id, role: gd.getAttribute("role"), number: cap ? cap.textContent.trim() : null,
    description: desc ? desc.textContent : null, summary: summary ? summary.textContent : null,
    svgs: svgs.length, hiddenSvgs: svgs.filter((s) => s.closest('[aria-hidden="true"]')).length,
    tables, sliders, drawnSliders, controls,
    data: (gd.data || []).map((t) => ({
      type: t.type || "scatter", visible: t.visible, x: decode(t.x), y: decode(t.y), z: decode(t.z),
      // the x a data table gives where the plot draws a stand-in (figure_data: meta.x)
      tableX: t.meta && t.meta.x ? decode(t.meta.x) : null,
    })),
    plotted: JSON.stringify((gd._fullData || []).filter((t) => t.visible === true).map((t) => [decode(t.x), decode(t.y)])),
    theme: { attr: gd.getAttribute("data-sd-theme"), paper: full.paper_bgcolor, plot: full.plot_bgcolor, font: full.font.color,
      grid: full.xaxis ? full.xaxis.gridcolor : null },
    contrast: {
      traces: window.sdFigures ? colours.map(([n, c]) => [n, c, window.sdFigures.contrast(c, full.plot_bgcolor)]) : [],
      text: window.sdFigures ? text.map((c) => [c, window.sdFigures.contrast(c, full.paper_bgcolor)]) : [],
    },
    focused: document.activeElement ? document.activeElement.id : null,
  };
}

// After a key press on a slider control: plotly's slider has caught up with the control, and
// the figure was redrawn (or the control stayed where it was, so nothing is to be redrawn).
function keyMoveSettled([index, plotted, value]) {
  const arr = (v) => (v && typeof v === "object" && ArrayBuffer.isView(v) ? Array.from(v) : v);
  const decode = (v) => (Array.isArray(v) ? v.map(arr) : arr(v));
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
  const box = gd.closest(".sd-figure") || gd.parentElement;
  const input = box.querySelector(".sd-slider input[type=range]");
  const slider = ((gd._fullLayout && gd.layout.sliders) || [])[0];
  if (!input || !slider || Number(input.value) !== (slider.active || 0)) return false;
  if (Number(input.value) === value) return true;
  const now = JSON.stringify((gd._fullData || []).filter((t) => t.visible === true).map((t) => [decode(t.x), decode(t.y)]));
  return now !== plotted;
}

// --- the keyboard walk -------------------------------------------------------------------------
// Where focus is after a Tab press: what the accessibility audit records of every stop, and what
// the figure check needs at a slider control.
function tabStop() {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const s = getComputedStyle(el);
  const r = el.getBoundingClientRect();
  const visible = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
  const desc = el.tagName.toLowerCase() + (el.type ? `[type=${el.type}]` : "")
    + (el.id ? `#${el.id}` : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).slice(0, 2).join(".") : "");
  const box = el.closest(".sd-figure");
  const figure = box ? [...document.querySelectorAll(".plotly-graph-div")].indexOf(box.querySelector(".plotly-graph-div")) : -1;
  return {
    desc, visible, inContent: Boolean(el.closest("article.bd-article")), plot: Boolean(el.closest(".plotly-graph-div")),
    // a formula is a stop only as a labelled box that scrolls (a11y.js); any other is MathJax's tab order
    math: el.tagName === "MJX-CONTAINER" && !(el.getAttribute("aria-label") && el.scrollWidth > el.clientWidth),
    range: el.matches('input[type="range"]'), size: [Math.round(r.width), Math.round(r.height)],
    key: desc + "|" + (el.textContent || "").slice(0, 40) + "|" + Math.round(r.top + window.scrollY),
    // a plotly figure's slider (Figure 2.2's stepper has the sliders' look but no plotly figure)
    id: el.id, isSlider: el.matches(".sd-slider input[type=range]") && figure >= 0, figure,
    outline: `${s.outlineStyle} ${s.outlineWidth}`,
  };
}

// Tab through the whole page from its top, once: every stop (for the audit), and at every slider
// control the arrow keys, End and Home (for the figure check).
async function keyboardWalk(page) {
  const stops = [];
  const walk = { presses: 0, reached: [], moves: [], outlines: [] };
  await page.evaluate(() => {
    if (document.activeElement) document.activeElement.blur();
    window.scrollTo(0, 0);
    // the walk starts at the top of the page
    const s = document.createElement("span");
    s.tabIndex = -1; s.id = "sdl-walk-start"; document.body.prepend(s); s.focus();
  });
  const seen = new Set();
  for (let k = 0; k < (config.maxTabs || 2500); k++) {
    await page.keyboard.press("Tab");
    walk.presses++;
    const here = await page.evaluate(tabStop);
    if (!here) { if (stops.length || k > 5) break; continue; }
    if (stops.length && stops[0].key === here.key) break; // wrapped around to the top
    if (here.id && seen.has(here.id)) break;
    if (here.id) seen.add(here.id);
    const { id, isSlider, figure, outline, ...stop } = here;
    stops.push(stop);
    if (!isSlider) continue;
    walk.reached.push({ figure, id });
    walk.outlines.push({ id, outline });
    let before = await page.evaluate(figureFacts, figure);
    const start = before.controls[0].value;
    for (const key of ["ArrowRight", "End", "ArrowLeft", "Home"]) {
      await page.keyboard.press(key);
      await until(page, keyMoveSettled, [figure, before.plotted, before.controls[0].value], SLIDER_MS);
      const after = await page.evaluate(figureFacts, figure);
      const shownTables = after.tables.filter((t) => t.shown).map((t) => t.step);
      walk.moves.push({
        figure, key, from: before.controls[0].value, to: after.controls[0].value,
        active: after.sliders[0].active, dataChanged: after.plotted !== before.plotted,
        valuetext: after.controls[0].valuetext,
        expected: (after.sliders[0].prefix + after.sliders[0].labels[after.sliders[0].active]).replace(/<[^>]*>/g, "")
          + (after.sliders[0].titles[after.sliders[0].active] ? "; " + after.sliders[0].titles[after.sliders[0].active] : ""),
        stillFocused: after.focused === id, shownSteps: [...new Set(shownTables)], max: after.controls[0].max,
      });
      before = after;
    }
    // back to the figure's own step, through its control: the checks that follow meet the figure as authored
    if (before.controls[0].value !== start) {
      await page.evaluate(([i, v]) => {
        const gd = document.querySelectorAll(".plotly-graph-div")[i];
        const input = (gd.closest(".sd-figure") || gd.parentElement).querySelector(".sd-slider input[type=range]");
        input.value = v;
        input.dispatchEvent(new Event("input", { bubbles: true }));
      }, [figure, start]);
      await until(page, keyMoveSettled, [figure, before.plotted, before.controls[0].value], SLIDER_MS);
    }
  }
  await page.evaluate(() => { const s = document.getElementById("sdl-walk-start"); if (s) s.remove(); });
  return { stops, walk };
}

// --- the modes ---------------------------------------------------------------------------------
function newResult(path, mode) {
  return { page: path, mode, fatal: null, jsErrors: [], consoleErrors: [], external: [], localFailures: [], ms: {} };
}

async function open(context, path, res) {
  const page = await context.newPage();
  page.on("pageerror", (e) => res.jsErrors.push(errorText(e, 500)));
  page.on("console", (m) => { if (m.type() === "error") res.consoleErrors.push(m.text().slice(0, 500)); });
  page.on("response", (r) => {
    if (r.url().startsWith(config.baseUrl) && r.status() >= 400) res.localFailures.push(`${r.status()} ${r.url()}`);
  });
  await routeOffline(page, res.external);
  return page;
}

// Run one stage, timing it; its error is kept in `errors[name]` and stops only that stage.
async function stage(res, name, fn) {
  const t0 = Date.now();
  try {
    return await fn();
  } catch (e) {
    res.errors = res.errors || {};
    res.errors[name] = errorText(e, 1500);
    return undefined;
  } finally {
    res.ms[name] = Date.now() - t0;
  }
}

// The reader's system switches to `scheme` ("light" or "dark"); the theme's "auto" mode follows it in
// place. Then the figures' relayouts and the page settle again, as after a load.
async function switchScheme(page, scheme) {
  await page.emulateMedia({ colorScheme: scheme });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.evaluate(figuresSettled);
  return page.evaluate(pageSettled, DRAW_MS);
}

// What a reader whose browser prefers dark meets as the page comes up (the theme's "auto" mode).
function autoDarkFacts() {
  return {
    mode: document.documentElement.getAttribute("data-mode"),
    theme: document.documentElement.getAttribute("data-theme"),
    figures: [...document.querySelectorAll(".plotly-graph-div")].map((gd) => ({
      attr: gd.getAttribute("data-sd-theme"), paper: gd._fullLayout ? gd._fullLayout.paper_bgcolor : null })),
  };
}

// Load, then let the figures and the theme settle (the figures' wait is reported, not thrown).
async function load(page, path, res) {
  await stage(res, "load", () => page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 120000 }));
  if (res.errors && res.errors.load) { res.fatal = res.errors.load; return false; }
  await stage(res, "settle", async () => {
    const t0 = Date.now();
    res.figuresReady = await until(page, figuresReady, config.setupLateMs || 20000, DRAW_MS, 100);
    await page.evaluate(figuresSettled);
    res.settled = await page.evaluate(pageSettled, Math.max(0, DRAW_MS - (Date.now() - t0)));
  });
  return true;
}

async function screenshot(page, path, prefix) {
  if (!config.screenshots) return null;
  mkdirSync(config.screenshots, { recursive: true });
  const file = join(config.screenshots, prefix + path.replace(/\.html$/, "").replaceAll("/", "__") + ".png");
  await page.evaluate(() => window.scrollTo(0, 0));
  // at a phone's width in CSS pixels (not the screen's two per pixel): a quarter of the pixels to encode
  await page.screenshot({ path: file, fullPage: true, scale: "css", timeout: 180000 }); // a long page on a busy machine
  return file;
}

async function openFolded(page) {
  // A reader may unfold everything: figures in folded parts must work too.
  await page.evaluate(() => {
    document.querySelectorAll("details").forEach((d) => { d.open = true; });
    window.dispatchEvent(new Event("resize"));
  });
}

async function lightMode(context, path) {
  const res = newResult(path, "light");
  const page = await open(context, path, res);
  try {
    if (!(await load(page, path, res))) return res;
    res.axe = await stage(res, "axe", () => audit(page));
    res.scripts = await stage(res, "figures", async () => {
      const scripts = await page.evaluate(scriptsLoaded);
      const n = await page.evaluate(() => document.querySelectorAll(".plotly-graph-div").length);
      res.figures = [];
      if (n && !res.figuresReady) throw new Error(`the figures were not drawn and set up within ${DRAW_MS} ms`);
      for (let i = 0; i < n; i++) {
        const facts = await page.evaluate(figureFacts, i);
        delete facts.focused;
        const plot = page.locator(`[id="${facts.id}"]`);
        facts.name = (await plot.ariaSnapshot()).trim();
        // a <figure> is named by its <figcaption>: Chromium's name for it is the caption as read aloud
        const fig = plot.locator("xpath=ancestor::figure[1]");
        const hasCaption = (await fig.count()) && (await fig.evaluate((f) => Boolean(f.querySelector("figcaption"))));
        facts.caption = hasCaption ? (await fig.ariaSnapshot()).trim() : null;
        res.figures.push(facts);
      }
      return scripts;
    });
    const walked = await stage(res, "keyboard", () => keyboardWalk(page));
    if (walked) { res.keyboard = walked.stops; res.walk = walked.walk; }
    res.themes = await stage(res, "themes", async () => {
      const themes = [];
      if (!res.figures || !res.figures.length) return themes;
      for (const theme of ["dark", "light"]) {
        themes.push(await page.evaluate(async ([t, facts]) => {
          document.documentElement.setAttribute("data-theme", t);
          await new Promise((r) => setTimeout(r, 0)); // the figures' observer queues the relayouts
          await (0, eval)(`(${facts.settled})`)();
          const n = document.querySelectorAll(".plotly-graph-div").length;
          const f = (0, eval)(`(${facts.figure})`);
          const figures = Array.from({ length: n }, (_, i) => {
            const x = f(i);
            return { index: i, theme: x.theme, contrast: x.contrast };
          });
          return { theme: t, figures, pageBackground: getComputedStyle(document.body).backgroundColor };
        }, [theme, { settled: figuresSettled.toString(), figure: figureFacts.toString() }]));
      }
      return themes;
    });
    // The dark mode's audit at a desktop's width (on the pages of config.darkPages; every page is audited dark on
    // the phone): the reader's system turns dark, from the top of the page as loaded.
    if (!config.darkPages || config.darkPages.includes(path)) res.dark = await stage(res, "dark", async () => {
      await page.evaluate(() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); });
      try {
        const settled = await switchScheme(page, "dark");
        return { settled, axe: await audit(page) };
      } finally {
        await switchScheme(page, "light"); // the checks below run in light mode, whatever happened here
      }
    });
    await stage(res, "reading", async () => {
      await openFolded(page);
      res.math = await page.evaluate(waitForMath);
      // Embedded widgets render after the page loads (and may hold figures): wait for them first.
      await until(page, () => {
        const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
        return views.every((s) => s.parentElement && s.parentElement.querySelector(".jupyter-widgets, .widget-subarea *"));
      }, null, DRAW_MS, 100);
      res.widgets = await page.evaluate(widgetState);
      // Plotly draws asynchronously: give every figure time to appear (and to settle after the resize).
      await until(page, allDrawn, null, DRAW_MS, 100);
      await page.evaluate(figuresSettled);
      res.tables = await page.evaluate(clippedCells);
      // at a desktop's width every display formula fits its column (measured as on a phone)
      res.wideMath = (await page.evaluate(displayMath)).filter((m) => m.overflows).map((m) => m.text);
    });
    // every step of every slider, button and frame: the title it sets is the title the reader reads
    res.titles = await stage(res, "titles", async () => {
      const n = await page.evaluate(() => document.querySelectorAll(".plotly-graph-div").length);
      const out = [];
      for (let i = 0; i < n; i++) {
        const moves = await page.evaluate((i) => {
          const gd = document.querySelectorAll(".plotly-graph-div")[i], L = gd.layout || {};
          return (L.sliders || []).length + (L.updatemenus || []).length
            + ((gd._transitionData && gd._transitionData._frames) || []).length;
        }, i);
        if (moves) out.push(await page.evaluate(stepTitles, [i, Math.min(SLIDER_MS, 3000)]));
      }
      return out;
    });
    await stage(res, "sliders", async () => {
      const figs = await page.evaluate(figureStates);
      res.read = [];
      for (const fig of figs) {
        const report = { index: fig.index, id: fig.id, drawn: fig.drawn, traces: fig.traces, sliders: fig.sliders, moves: [] };
        res.read.push(report);
        if (!fig.drawn || fig.sliders.length === 0) continue;
        const { steps, active } = fig.sliders[0];
        const targets = [...new Set([active + 1, steps - 1, 0, Math.floor(steps / 2)])]
          .filter((s) => s >= 0 && s < steps && s !== active).slice(0, config.maxMovesPerSlider || 3);
        let before = fig;
        for (const step of targets) {
          const geo = await page.evaluate(sliderGeometry, [fig.index, step]);
          let how = "click";
          if (geo && geo.x > 0 && geo.y > 0) {
            await page.mouse.click(geo.x, geo.y);
            if (geo.input) {
              // the range input: a click at the step's place, nudged a pixel at a time where the thumb's
              // width put it on the next step
              how = "click on the range input";
              for (let nudge = 1; nudge <= 6; nudge++) {
                const at = await page.evaluate((id) => Number(document.getElementById(id).value), geo.input);
                if (at === step) break;
                await page.mouse.click(geo.x + (at < step ? nudge : -nudge), geo.y);
              }
            }
          } else {
            // Hidden figure (e.g. folded output): fall back to the step's own Plotly call.
            how = "programmatic";
            await page.evaluate(sliderStepProgrammatically, [fig.index, step]);
          }
          await until(page, figureMoved, [fig.index, before.data, before.plotted], SLIDER_MS);
          const after = (await page.evaluate(figureStates, fig.index))[fig.index];
          report.moves.push({
            to: step, how, active: after.sliders[0] ? after.sliders[0].active : null,
            dataChanged: after.data !== before.data, drawingChanged: after.plotted !== before.plotted,
            drawn: after.drawn,
          });
          before = after;
        }
      }
    });
    res.screenshot = await stage(res, "screenshot", () => screenshot(page, path, ""));
  } finally {
    await page.close();
  }
  return res;
}

async function phoneMode(context, path) {
  const res = newResult(path, "phone");
  const page = await open(context, path, res);
  try {
    if (!(await load(page, path, res))) return res;
    // the phone's browser prefers dark as the page comes up: the figures must come up dark by themselves, and
    // every check below runs in that dark mode (the desktop's load is audited light)
    res.autoDark = await stage(res, "autoDark", () => page.evaluate(autoDarkFacts));
    await stage(res, "steady", () => page.evaluate(steadyPhoneLayout, phoneLayout.toString()));
    // the narrow layout may have changed the page: the theme's catch-up again (figures were waited for)
    await stage(res, "settle2", () => page.evaluate(pageSettled, 0));
    res.axe = await stage(res, "axe", () => audit(page));
    res.displayMath = await stage(res, "displayMath", () => page.evaluate(displayMath));
    res.backToTop = await stage(res, "backToTop", () => page.evaluate(backToTop));
    res.layout = await stage(res, "layout", async () => {
      await page.evaluate(() => { document.querySelectorAll("details").forEach((d) => { d.open = true; }); });
      await until(page, allDrawn, null, DRAW_MS, 100);
      const layout = await page.evaluate(steadyPhoneLayout, phoneLayout.toString());
      return { ...layout, tables: await page.evaluate(clippedCells) };
    });
    if (res.layout) res.layout.screenshot = await stage(res, "screenshot", () => screenshot(page, path, "phone__"));
  } finally {
    await page.close();
  }
  return res;
}

// --- the three reports of a page, in the shapes the tests read ---------------------------------
function stageError(r, ...names) {
  if (r.fatal) return r.fatal;
  for (const n of names) if (r.errors && r.errors[n]) return `${n}: ${r.errors[n]}`;
  return null;
}

// The dark mode's report at a desktop's width, from its stage of the light load.
function darkReport(light) {
  const dark = { ...newResult(light.page, "dark"), external: light.external, ms: { dark: light.ms.dark } };
  dark.fatal = stageError(light, "settle", "dark");
  if (light.dark) { dark.settled = light.dark.settled; dark.axe = light.dark.axe; }
  return dark;
}

function reports(path, light, phone) {
  const dark = !config.darkPages || config.darkPages.includes(path) ? darkReport(light) : null;
  const phoneFatal = stageError(phone, "layout");
  const read = {
    page: path, fatal: stageError(light, "reading", "sliders", "screenshot"),
    jsErrors: [...light.jsErrors, ...phone.jsErrors.map((e) => `(at a phone's width) ${e}`)],
    consoleErrors: [...light.consoleErrors, ...phone.consoleErrors.map((e) => `(at a phone's width) ${e}`)],
    external: [...light.external, ...phone.external], localFailures: [...light.localFailures, ...phone.localFailures],
    math: light.math || null, figures: light.read || [], widgets: light.widgets || null, tables: light.tables || null,
    wideMath: light.wideMath || null,
    screenshot: light.screenshot || null, screenshotAsked: Boolean(config.screenshots),
    phone: phoneFatal ? { fatal: phoneFatal } : phone.layout,
    ms: { light: light.ms, phone: phone.ms },
  };
  const axe = Object.fromEntries([light, dark, phone].filter(Boolean).map((r) => [r.mode, {
    page: path, mode: r.mode, external: r.external,
    fatal: stageError(r, "settle", "axe", ...(r.mode === "light" ? ["keyboard"] : []),
      ...(r.mode === "phone" ? ["steady", "settle2", "displayMath", "backToTop"] : [])),
    theme: r.settled ? r.settled.theme : null, axe: r.axe || null,
    ...(r.mode === "light" ? { keyboard: r.keyboard || [] } : {}),
    ...(r.mode === "phone" ? { displayMath: r.displayMath || [], backToTop: r.backToTop || null } : {}),
    ms: r.ms,
  }]));
  const autoDarkError = stageError(phone, "autoDark");
  const figures = {
    page: path, fatal: stageError(light, "figures", "keyboard", "themes"),
    jsErrors: [...light.jsErrors, ...phone.jsErrors.map((e) => `(on a phone that prefers dark at first) ${e}`)],
    external: [...light.external, ...phone.external], scripts: light.scripts || null, figures: light.figures || [],
    walk: light.walk || null, themes: light.themes || [],
    titles: light.titles || null, titlesError: stageError(light, "titles"),
    autoDark: autoDarkError ? { fatal: autoDarkError } : phone.autoDark,
    ms: { light: light.ms, phone: phone.ms },
  };
  return { page: path, read, axe, figures };
}

// --- the pass ----------------------------------------------------------------------------------
// Each worker below drives a browser of its own: pages of one browser share its compositor, and a
// long page's full-page screenshot there held up the other page's animation frames by seconds.
async function startBrowser() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  const contexts = {
    light: await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "light" }),
    // A phone: 390 CSS pixels wide (an iPhone 12-15), touch, scaled like a phone's screen; its browser
    // prefers dark (phoneMode checks and audits the page in that mode).
    phone: await browser.newContext({
      viewport: { width: config.phoneWidth, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
      colorScheme: "dark",
    }),
  };
  return { browser, contexts };
}
const run = { light: lightMode, phone: phoneMode };
// A few loads at a time: a page spends much of its time waiting on its own requests.
const jobs = config.pages.flatMap((p) => ["light", "phone"].map((m) => [p, m]));
const done = {};
async function worker() {
  const { browser, contexts } = await startBrowser();
  try {
    while (jobs.length) {
      const [path, mode] = jobs.shift();
      let res;
      try {
        res = await run[mode](contexts[mode], path);
      } catch (e) {
        res = newResult(path, mode);
        res.fatal = errorText(e);
      }
      (done[path] = done[path] || {})[mode] = res;
      // progress, for a run cut short: the stages' times of each load as it ends, each page's reports once it is done
      appendFileSync(config.result + ".progress", JSON.stringify({ page: path, mode, ms: res.ms }) + "\n");
      const d = done[path];
      if (d.light && d.phone) appendFileSync(config.result + ".pages", JSON.stringify(reports(path, d.light, d.phone)) + "\n");
    }
  } finally {
    await browser.close();
  }
}
const t0 = Date.now();
await Promise.all(Array.from({ length: config.concurrency || 1 }, worker));
const out = config.pages.map((p) => reports(p, done[p].light, done[p].phone));
writeFileSync(config.result, JSON.stringify({ ms: Date.now() - t0, pages: out }, null, 1));
