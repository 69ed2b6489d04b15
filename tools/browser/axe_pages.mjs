// Accessibility audit of the built book in Debian's headless Chromium: axe-core (npm, pinned in
// package-lock.json) on every page in the theme's light and dark modes and at a phone's width,
// a keyboard walk over every tab stop of each page, and the overflow of display formulas.
//
// Usage: node axe_pages.mjs config.json   (written by tests/browser_support.py)
// Requests leave the machine only as in check_pages.mjs: the CDN assets named in config.assets
// are answered from local copies, everything else is blocked (and reported).
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, extname } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const MIME = {
  ".js": "application/javascript", ".css": "text/css", ".json": "application/json",
  ".svg": "image/svg+xml", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
  ".otf": "font/otf", ".png": "image/png", ".map": "application/json",
};

function localFileFor(url) {
  const bare = url.split("#")[0].split("?")[0];
  for (const a of config.assets) {
    if (a.url && bare === a.url) return a.file;
    if (a.prefix && bare.startsWith(a.prefix)) return join(a.dir, decodeURIComponent(bare.slice(a.prefix.length)));
  }
  return null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function routeOffline(page, result) {
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
    result.external.push(url);
    return route.abort("blockedbyclient");
  });
}

// --- evaluated inside the page -------------------------------------------------------
// The page is ready once MathJax has typeset and every plotly figure is drawn (or time is up).
async function settle(timeoutMs) {
  const t0 = Date.now();
  while (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) && Date.now() - t0 < 15000) {
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
  return { theme: document.documentElement.dataset.theme || null, mathTabStops: document.querySelectorAll("mjx-container[tabindex]").length };
}

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

// Tab through the page from the top: every stop, and whether a reader can see where focus is
// (an outline or a box shadow while focused).
async function keyboardWalk(page, maxStops) {
  await page.evaluate(() => { window.scrollTo(0, 0); document.activeElement && document.activeElement.blur(); });
  await page.evaluate(() => {
    // the walk starts at the top of the page
    const s = document.createElement("span");
    s.tabIndex = -1; s.id = "sdl-walk-start"; document.body.prepend(s); s.focus();
  });
  const stops = [];
  for (let i = 0; i < maxStops; i++) {
    await page.keyboard.press("Tab");
    const stop = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const s = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      const visible = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
      const inContent = Boolean(el.closest("article.bd-article"));
      const plot = Boolean(el.closest(".plotly-graph-div"));
      const desc = el.tagName.toLowerCase() + (el.type ? `[type=${el.type}]` : "")
        + (el.id ? `#${el.id}` : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).slice(0, 2).join(".") : "");
      return {
        desc, visible, inContent, plot,
        // a formula is a stop only as a labelled box that scrolls (a11y.js); any other is MathJax's tab order
        math: el.tagName === "MJX-CONTAINER" && !(el.getAttribute("aria-label") && el.scrollWidth > el.clientWidth),
        range: el.matches('input[type="range"]'), size: [Math.round(r.width), Math.round(r.height)],
        key: desc + "|" + (el.textContent || "").slice(0, 40) + "|" + Math.round(r.top + window.scrollY),
      };
    });
    if (stop === null) break;
    if (stops.length && stops[0].key === stop.key) break; // wrapped around
    stops.push(stop);
  }
  return stops;
}

// At a phone's width: each display formula, whether it overflows, and how a reader can scroll it.
function displayMath() {
  return [...document.querySelectorAll("mjx-container[display='true']")].map((mjx) => {
    const box = mjx.closest("div.math, .math") || mjx.parentElement;
    const scroller = [mjx, box].find((e) => e && e.scrollWidth > e.clientWidth + 1
      && ["auto", "scroll"].includes(getComputedStyle(e).overflowX));
    const overflows = mjx.scrollWidth > mjx.clientWidth + 1 || box.scrollWidth > box.clientWidth + 1
      || mjx.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
    return {
      overflows,
      scrolls: Boolean(scroller),
      focusable: Boolean(scroller && scroller.tabIndex >= 0),
      labelled: Boolean(scroller && (scroller.getAttribute("aria-label") || scroller.getAttribute("aria-labelledby"))),
      spills: box.getBoundingClientRect().right > document.documentElement.clientWidth + 1,
    };
  });
}

// The theme's "Back to top" button, which shows when the reader scrolls back up a long page: its box.
async function backToTop(page) {
  await page.evaluate(() => window.scrollTo(0, Math.min(3000, document.documentElement.scrollHeight)));
  await sleep(300);
  await page.evaluate(() => window.scrollBy(0, -400));
  await sleep(600);
  return page.evaluate(() => {
    const b = document.getElementById("pst-back-to-top");
    if (!b || getComputedStyle(b).display === "none") return null;
    const r = b.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height,
      viewport: [window.innerWidth, window.innerHeight] };
  });
}

// --- one page, in each mode ---------------------------------------------------------------
// The page is loaded once, in light mode at a desktop's width; "dark" switches the reader's
// colour scheme (the theme, in its "auto" mode, follows it) and "phone" narrows the window to a
// phone's width, in light mode again.
async function audit(browser, path) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "light" });
  const page = await context.newPage();
  const external = [];
  await routeOffline(page, { external });
  const results = [];
  const t0 = Date.now();
  let fatal = null;
  try {
    await page.goto(config.baseUrl + path, { waitUntil: "load", timeout: 120000 });
    await page.evaluate(settle, config.drawTimeoutMs || 20000);
    await page.addScriptTag({ path: config.axe });
  } catch (e) {
    fatal = String(e && e.stack ? e.stack : e).slice(0, 1000);
  }
  for (const mode of config.modes) {
    const result = { page: path, mode, external, fatal, ms: {} };
    results.push(result);
    if (fatal) continue;
    try {
      if (mode === "phone") await page.setViewportSize({ width: config.phoneWidth, height: 844 });
      await page.emulateMedia({ colorScheme: mode === "dark" ? "dark" : "light" });
      await sleep(mode === "phone" ? 1500 : 300); // the theme switches modes, figures relayout, a11y.js re-marks
      Object.assign(result, await page.evaluate(settle, config.drawTimeoutMs || 20000));
      result.axe = await page.evaluate(runAxe, config.tags);
      result.ms.axe = Date.now() - t0;
      if (mode === "light") result.keyboard = await keyboardWalk(page, config.maxTabStops || 600);
      if (mode === "phone") {
        result.displayMath = await page.evaluate(displayMath);
        result.backToTop = await backToTop(page);
      }
      result.ms.done = Date.now() - t0;
    } catch (e) {
      result.fatal = String(e && e.stack ? e.stack : e).slice(0, 1000);
    }
  }
  await context.close();
  return results;
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const jobs = [...config.pages];
const out = [];
async function worker() {
  while (jobs.length) out.push(...(await audit(browser, jobs.shift())));
}
await Promise.all(Array.from({ length: config.concurrency || 1 }, worker));
await browser.close();
writeFileSync(config.result, JSON.stringify(out, null, 1));
