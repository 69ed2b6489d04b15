// Open every page of the built book in Debian's headless Chromium and report what a
// reader would see: JavaScript errors, math typeset by MathJax, plotly figures drawn,
// sliders that change the plotted data, embedded widgets rendered, and a screenshot;
// then open it again at a phone's width and measure its layout (sideways scrolling,
// the width plotly leaves each plot, text cut at a figure's edge).
//
// Usage: node check_pages.mjs config.json   (written by tests/browser_support.py)
// Requests to the book's own server go through; requests to the CDN assets named in
// config.assets are answered from local copies; every other request is blocked and
// reported, so the book cannot silently depend on anything it does not name.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { join, extname } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const MIME = {
  ".js": "application/javascript", ".css": "text/css", ".json": "application/json",
  ".svg": "image/svg+xml", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
  ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject", ".png": "image/png", ".map": "application/json",
};

function localFileFor(url) {
  const bare = url.split("#")[0].split("?")[0];
  for (const a of config.assets) {
    if (a.url && bare === a.url) return a.file;
    if (a.prefix && bare.startsWith(a.prefix)) return join(a.dir, decodeURIComponent(bare.slice(a.prefix.length)));
  }
  return null;
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// --- code evaluated inside the page -------------------------------------------------
async function waitForMath() {
  const nodes = [...document.querySelectorAll(".math")].filter((e) => !e.closest("pre, code"));
  if (nodes.length === 0) return { expected: 0, typeset: 0, errors: [], raw: [] };
  const t0 = Date.now();
  while (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) && Date.now() - t0 < 15000) {
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
  // The first SVG holds the plot area and axes; sliders and legends live in the last one.
  const plotted = (gd) => {
    const svg = gd.querySelector(".main-svg");
    return svg ? svg.innerHTML : "";
  };
  return [...document.querySelectorAll(".plotly-graph-div")].map((gd, index) => {
    if (only !== undefined && only !== null && index !== only) return null;
    const full = gd._fullData || [];
    const visible = full.filter((t) => t.visible === true);
    const data = JSON.stringify(visible.map((t) => [t.type, toArray(t.x), toArray(t.y), toArray(t.z), toArray(t.values)]));
    const svg = gd.querySelector(".main-svg");
    const box = gd.getBoundingClientRect();
    const sliders = (gd._fullLayout && gd._fullLayout.sliders) || [];
    return {
      index,
      id: gd.id,
      drawn: Boolean(gd._fullLayout && svg && visible.length > 0 && box.width > 0 && box.height > 0),
      traces: full.length,
      visibleTraces: visible.length,
      width: box.width,
      data,
      plotted: plotted(gd),
      sliders: sliders.map((s) => ({ steps: s.steps.length, active: s.active })),
    };
  });
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

function widgetState() {
  const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  const rendered = views.filter((s) => s.parentElement && s.parentElement.querySelector(".jupyter-widgets, .widget-subarea *"));
  return { views: views.length, rendered: rendered.length };
}

function sliderGeometry([index, step]) {
  const gd = document.querySelectorAll(".plotly-graph-div")[index];
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

async function routeOffline(page, result) {
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith(config.baseUrl) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    const file = localFileFor(url);
    if (file && existsSync(file)) {
      return route.fulfill({
        status: 200, path: file,
        contentType: MIME[extname(file)] || "application/octet-stream",
        headers: { "access-control-allow-origin": "*" },
      });
    }
    result.external.push(file ? `${url} (named, but the local copy ${file} is missing)` : url);
    return route.abort("blockedbyclient");
  });
}

// --- one page ------------------------------------------------------------------------
async function checkPage(context, path) {
  const page = await context.newPage();
  const result = {
    page: path, jsErrors: [], consoleErrors: [], external: [], localFailures: [],
    math: null, figures: [], widgets: null, screenshot: null, fatal: null, ms: {},
  };
  const t00 = Date.now();
  const lap = (what) => { result.ms[what] = Date.now() - t00; };
  page.on("pageerror", (e) => result.jsErrors.push(String(e && e.stack ? e.stack : e).slice(0, 500)));
  page.on("console", (m) => { if (m.type() === "error") result.consoleErrors.push(m.text().slice(0, 500)); });
  page.on("response", (r) => {
    if (r.url().startsWith(config.baseUrl) && r.status() >= 400) result.localFailures.push(`${r.status()} ${r.url()}`);
  });
  await routeOffline(page, result);
  try {
    await page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 60000 });
    // A reader may unfold everything: figures in folded parts must work too.
    await page.evaluate(() => {
      document.querySelectorAll("details").forEach((d) => { d.open = true; });
      window.dispatchEvent(new Event("resize"));
    });
    lap("load");
    result.math = await page.evaluate(waitForMath);
    lap("math");
    // Embedded widgets render after the page loads (and may hold figures): wait for them first.
    const t0 = Date.now();
    result.widgets = await page.evaluate(widgetState);
    while (result.widgets.rendered < result.widgets.views && Date.now() - t0 < (config.drawTimeoutMs || 20000)) {
      await sleep(100);
      result.widgets = await page.evaluate(widgetState);
    }
    // Plotly draws asynchronously: give every figure time to appear.
    let figs = await page.evaluate(figureStates);
    while (figs.some((f) => !f.drawn) && Date.now() - t0 < (config.drawTimeoutMs || 20000)) {
      await sleep(100);
      figs = await page.evaluate(figureStates);
    }
    await sleep(200);
    lap("figures");
    for (const fig of figs) {
      const report = { index: fig.index, id: fig.id, drawn: fig.drawn, traces: fig.traces, sliders: fig.sliders, moves: [] };
      result.figures.push(report);
      if (!fig.drawn || fig.sliders.length === 0) continue;
      const { steps, active } = fig.sliders[0];
      const targets = [...new Set([active + 1, steps - 1, 0, Math.floor(steps / 2)])]
        .filter((s) => s >= 0 && s < steps && s !== active).slice(0, config.maxMovesPerSlider || 3);
      let before = fig;
      for (const step of targets) {
        await page.evaluate((i) => document.querySelectorAll(".plotly-graph-div")[i].scrollIntoView({ block: "center" }), fig.index);
        await sleep(50);
        const geo = await page.evaluate(sliderGeometry, [fig.index, step]);
        let how = "click";
        if (geo && geo.x > 0 && geo.y > 0) {
          await page.mouse.click(geo.x, geo.y);
        } else {
          // Hidden figure (e.g. folded output): fall back to the step's own Plotly call.
          how = "programmatic";
          await page.evaluate(sliderStepProgrammatically, [fig.index, step]);
        }
        let after = null;
        const t1 = Date.now();
        do {
          await sleep(50);
          after = (await page.evaluate(figureStates, fig.index))[fig.index];
        } while (after.data === before.data && Date.now() - t1 < (config.sliderTimeoutMs || 8000));
        await sleep(50);
        after = (await page.evaluate(figureStates, fig.index))[fig.index];
        report.moves.push({
          to: step, how, active: after.sliders[0] ? after.sliders[0].active : null,
          dataChanged: after.data !== before.data, drawingChanged: after.plotted !== before.plotted,
          drawn: after.drawn,
        });
        before = after;
      }
    }
    lap("sliders");
    if (config.screenshots) {
      mkdirSync(config.screenshots, { recursive: true });
      const file = join(config.screenshots, path.replace(/\.html$/, "").replaceAll("/", "__") + ".png");
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: file, fullPage: true });
      result.screenshot = file;
      lap("screenshot");
    }
  } catch (e) {
    result.fatal = String(e && e.stack ? e.stack : e).slice(0, 1000);
  }
  await page.close();
  if (phoneContext && !result.fatal) result.phone = await checkPhone(phoneContext, path, result);
  return result;
}

// The same page at a phone's width: its layout only (the checks above cover the rest).
async function checkPhone(context, path, result) {
  const page = await context.newPage();
  await routeOffline(page, result);
  let phone = null;
  try {
    await page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 60000 });
    await page.evaluate(() => { document.querySelectorAll("details").forEach((d) => { d.open = true; }); });
    const t0 = Date.now();
    let figs = await page.evaluate(figureStates);
    while (figs.some((f) => !f.drawn) && Date.now() - t0 < (config.drawTimeoutMs || 20000)) {
      await sleep(100);
      figs = await page.evaluate(figureStates);
    }
    // Figures may relayout themselves for the narrow screen after their first draw: wait until the layout settles.
    phone = await page.evaluate(phoneLayout);
    for (let tries = 0; tries < 20; tries++) {
      await sleep(250);
      const again = await page.evaluate(phoneLayout);
      const same = JSON.stringify(again) === JSON.stringify(phone);
      phone = again;
      if (same) break;
    }
    if (config.screenshots) {
      const file = join(config.screenshots, "phone__" + path.replace(/\.html$/, "").replaceAll("/", "__") + ".png");
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: file, fullPage: true });
      phone.screenshot = file;
    }
  } catch (e) {
    phone = { fatal: String(e && e.stack ? e.stack : e).slice(0, 1000) };
  }
  await page.close();
  return phone;
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
// A phone: 390 CSS pixels wide (an iPhone 12-15), touch, scaled like a phone's screen.
const phoneContext = config.phoneWidth
  ? await browser.newContext({
    viewport: { width: config.phoneWidth, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  })
  : null;
// A few pages at a time: a page spends much of its time waiting on its own requests.
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
