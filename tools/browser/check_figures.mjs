// The book's plotly figures as a keyboard user, a screen reader and a dark-mode reader
// meet them (headless Chromium): for every page, how many times the figure script is
// loaded; for every figure its accessible name, description and data tables (compared
// with the figure's own traces); a keyboard-only walk that Tabs to every slider control
// and moves it with the arrow keys, Home and End; and the page switched to dark and back.
//
// Usage: node check_figures.mjs config.json   (written by tests/browser_support.py)
// Requests go to the book's own server or to local copies of the CDN assets it names;
// anything else is blocked and reported.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, extname } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const MIME = {
  ".js": "application/javascript", ".css": "text/css", ".json": "application/json",
  ".svg": "image/svg+xml", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
  ".otf": "font/otf", ".png": "image/png", ".map": "application/json",
};
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function localFileFor(url) {
  const bare = url.split("#")[0].split("?")[0];
  for (const a of config.assets) {
    if (a.url && bare === a.url) return a.file;
    if (a.prefix && bare.startsWith(a.prefix)) return join(a.dir, decodeURIComponent(bare.slice(a.prefix.length)));
  }
  return null;
}
async function routeOffline(page, result) {
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith(config.baseUrl) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    const file = localFileFor(url);
    if (file && existsSync(file)) {
      return route.fulfill({ status: 200, path: file, contentType: MIME[extname(file)] || "application/octet-stream",
        headers: { "access-control-allow-origin": "*" } });
    }
    result.external.push(url);
    return route.abort("blockedbyclient");
  });
}

// --- evaluated in the page -------------------------------------------------------------
function scriptsLoaded() {
  const inline = [...document.querySelectorAll("script:not([src])")];
  return {
    files: document.querySelectorAll('script[src*="sd-figures.js"]').length,
    styles: document.querySelectorAll('link[href*="sd-figures.css"]').length,
    inlineCopies: inline.filter((s) => s.textContent.includes("function wrapLine")).length,
    defined: Boolean(window.sdFigures),
  };
}

function figuresReady() {
  // drawn, and set up by figures.js (a figure it never set up is reported as such, after a while)
  const gds = [...document.querySelectorAll(".plotly-graph-div")];
  const late = performance.now() > 20000;
  return gds.every((gd) => gd._fullLayout && (late || (gd.getAttribute("data-sd-init") && gd._sdThemeBusy)));
}

async function settle() {
  // every figure's theme and narrow-screen relayouts done
  const gds = [...document.querySelectorAll(".plotly-graph-div")];
  await Promise.all(gds.map((gd) => gd._sdThemeBusy || null));
  await new Promise((r) => setTimeout(r, 300));
  return gds.length;
}

// Everything about one figure a test compares, read from the page (index among .sd-figure plots).
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
  const sliders = (full.sliders || []).map((s) => ({ active: s.active, labels: s.steps.map((st) => st.label),
    prefix: (s.currentvalue && s.currentvalue.prefix) || "" }));
  const controls = [...box.querySelectorAll(".sd-slider input[type=range]")].map((i) => ({
    id: i.id, value: Number(i.value), max: Number(i.max), valuetext: i.getAttribute("aria-valuetext"),
    label: i.labels && i.labels[0] ? i.labels[0].textContent : "",
  }));
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
    tables, sliders, controls,
    data: (gd.data || []).map((t) => ({ type: t.type || "scatter", visible: t.visible, x: decode(t.x), y: decode(t.y), z: decode(t.z) })),
    plotted: JSON.stringify((gd._fullData || []).filter((t) => t.visible === true).map((t) => [decode(t.x), decode(t.y)])),
    theme: { attr: gd.getAttribute("data-sd-theme"), paper: full.paper_bgcolor, plot: full.plot_bgcolor, font: full.font.color,
      grid: full.xaxis ? full.xaxis.gridcolor : null },
    contrast: {
      traces: window.sdFigures ? colours.map(([n, c]) => [n, c, window.sdFigures.contrast(c, full.plot_bgcolor)]) : [],
      text: window.sdFigures ? text.map((c) => [c, window.sdFigures.contrast(c, full.paper_bgcolor)]) : [],
    },
  };
}

// --- one page ----------------------------------------------------------------------------
async function checkPage(context, path) {
  const page = await context.newPage();
  const result = { page: path, fatal: null, jsErrors: [], external: [], scripts: null, figures: [], walk: null, themes: [] };
  page.on("pageerror", (e) => result.jsErrors.push(String(e && e.stack ? e.stack : e).slice(0, 500)));
  await routeOffline(page, result);
  try {
    await page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 180000 });
    result.scripts = await page.evaluate(scriptsLoaded);
    const count = await page.evaluate(() => document.querySelectorAll(".plotly-graph-div").length);
    if (count === 0) { await page.close(); return result; }
    await page.waitForFunction(figuresReady, null, { timeout: config.drawTimeoutMs || 30000 });
    const n = await page.evaluate(settle);
    for (let i = 0; i < n; i++) {
      const facts = await page.evaluate(figureFacts, i);
      const plot = page.locator(`[id="${facts.id}"]`);
      facts.name = (await plot.ariaSnapshot()).trim();
      // a <figure> is named by its <figcaption>: Chromium's name for it is the caption as read aloud
      const fig = plot.locator("xpath=ancestor::figure[1]");
      const hasCaption = (await fig.count()) && (await fig.evaluate((f) => Boolean(f.querySelector("figcaption"))));
      facts.caption = hasCaption ? (await fig.ariaSnapshot()).trim() : null;
      result.figures.push(facts);
    }
    result.walk = await keyboardWalk(page);
    for (const theme of ["dark", "light"]) {
      await page.evaluate((t) => { document.documentElement.setAttribute("data-theme", t); }, theme);
      await sleep(100);
      await page.evaluate(settle);
      const figs = [];
      for (let i = 0; i < n; i++) {
        const f = await page.evaluate(figureFacts, i);
        figs.push({ index: i, theme: f.theme, contrast: f.contrast });
      }
      const page_bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      result.themes.push({ theme, figures: figs, pageBackground: page_bg });
    }
  } catch (e) {
    result.fatal = String(e && e.stack ? e.stack : e).slice(0, 1500);
  }
  await page.close();
  if (!result.fatal && result.figures.length) result.autoDark = await checkAutoDark(path, result);
  return result;
}

// The page in a browser that prefers dark, with the theme's mode left at "auto": the figures
// must come up dark by themselves.
async function checkAutoDark(path, result) {
  const page = await darkContext.newPage();
  await routeOffline(page, result);
  try {
    await page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 180000 });
    await page.waitForFunction(figuresReady, null, { timeout: config.drawTimeoutMs || 30000 });
    await page.evaluate(settle);
    return await page.evaluate(() => ({
      mode: document.documentElement.getAttribute("data-mode"),
      theme: document.documentElement.getAttribute("data-theme"),
      figures: [...document.querySelectorAll(".plotly-graph-div")].map((gd) => ({
        attr: gd.getAttribute("data-sd-theme"), paper: gd._fullLayout.paper_bgcolor })),
    }));
  } catch (e) {
    return { fatal: String(e && e.stack ? e.stack : e).slice(0, 1000) };
  } finally {
    await page.close();
  }
}

// Tab through the whole page from its top; at every slider control, move it by keyboard.
async function keyboardWalk(page) {
  const walk = { presses: 0, reached: [], moves: [], outlines: [] };
  await page.evaluate(() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); });
  await page.mouse.click(1, 1); // focus the document, as a reader's first Tab starts from its top
  const seen = new Set();
  for (let k = 0; k < (config.maxTabs || 2500); k++) {
    await page.keyboard.press("Tab");
    walk.presses++;
    const here = await page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return null;
      const s = getComputedStyle(a);
      const figs = [...document.querySelectorAll(".plotly-graph-div")];
      const box = a.closest(".sd-figure");
      return { id: a.id, tag: a.tagName, type: a.type || null, isSlider: a.matches(".sd-slider input[type=range]"),
        figure: box ? figs.indexOf(box.querySelector(".plotly-graph-div")) : -1,
        outline: `${s.outlineStyle} ${s.outlineWidth}` };
    });
    if (!here) { if (k > 5) break; continue; }
    const key = here.id || `${here.tag}@${k}`;
    if (here.id && seen.has(key)) break; // wrapped around to the top
    if (here.id) seen.add(key);
    if (!here.isSlider) continue;
    walk.reached.push({ figure: here.figure, id: here.id });
    walk.outlines.push({ id: here.id, outline: here.outline });
    const keys = ["ArrowRight", "End", "ArrowLeft", "Home"];
    for (const key of keys) {
      const before = await page.evaluate(figureFacts, here.figure);
      await page.keyboard.press(key);
      let after = before;
      const t0 = Date.now();
      do {
        await sleep(50);
        after = await page.evaluate(figureFacts, here.figure);
      } while ((after.plotted === before.plotted || after.controls[0].value !== after.sliders[0].active)
        && Date.now() - t0 < (config.sliderTimeoutMs || 8000));
      const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
      const shownTables = after.tables.filter((t) => t.shown).map((t) => t.step);
      walk.moves.push({
        figure: here.figure, key, from: before.controls[0].value, to: after.controls[0].value,
        active: after.sliders[0].active, dataChanged: after.plotted !== before.plotted,
        valuetext: after.controls[0].valuetext,
        expected: (after.sliders[0].prefix + after.sliders[0].labels[after.sliders[0].active]).replace(/<[^>]*>/g, ""),
        stillFocused: focused === here.id, shownSteps: [...new Set(shownTables)], max: after.controls[0].max,
      });
    }
  }
  return walk;
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const darkContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "dark" });
const queue = [...config.pages];
const byPage = {};
async function worker() {
  while (queue.length) {
    const path = queue.shift();
    byPage[path] = await checkPage(context, path);
  }
}
await Promise.all(Array.from({ length: config.concurrency || 1 }, worker));
await browser.close();
writeFileSync(config.result, JSON.stringify(config.pages.map((p) => byPage[p]), null, 1));
