// A feedback page made from a hostile notebook, in Debian's headless Chromium: does any of the notebook's active
// content run? Each payload would set window.__pwned, the page title, or request a URL holding "pwned".
//
// Usage: node feedback_page.mjs config.json   (written by tests/test_grading_outputs.py: baseUrl, chromium,
// result, page)
import { readFileSync, writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const browser = await chromium.launch({
  executablePath: config.chromium,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"],
});
const out = { requests: [], dialogs: [], errors: [] };
try {
  const context = await browser.newContext();
  // Only the local server answers; every request is recorded (a payload's fetch included), the rest aborted.
  await context.route("**/*", (route) => {
    out.requests.push(route.request().url());
    return route.request().url().startsWith(config.baseUrl) ? route.continue() : route.abort("blockedbyclient");
  });
  const page = await context.newPage();
  page.on("dialog", (d) => { out.dialogs.push(d.message()); d.dismiss(); });
  page.on("pageerror", (e) => out.errors.push(String(e)));
  await page.goto(`${config.baseUrl}${config.page}`, { waitUntil: "load", timeout: 120000 });
  await page.waitForTimeout(1500);
  // a reader clicks every link of the page (a javascript: URL would run now)
  for (const link of await page.$$("a")) {
    const href = await link.getAttribute("href");
    if (href && !href.startsWith("#") && !href.startsWith("http")) {
      await link.click({ timeout: 2000 }).catch(() => {});
    }
  }
  await page.waitForTimeout(500);
  Object.assign(out, await page.evaluate(() => ({
    pwned: window.__pwned || null,
    title: document.title,
    scripts: [...document.querySelectorAll("script")].map((s) => s.textContent).filter((t) => /pwned/i.test(t)),
    handlers: [...document.querySelectorAll("*")].flatMap((el) =>
      [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName} ${a.name}`)),
    frames: document.querySelectorAll("iframe, object, embed").length,
    table: [...document.querySelectorAll("td")].map((td) => td.textContent.trim()),
    pngs: [...document.querySelectorAll("img")].filter((i) => i.src.startsWith("data:image/png"))
      .map((i) => ({ width: i.naturalWidth, height: i.naturalHeight })),
  })));
} finally {
  await browser.close();
}
writeFileSync(config.result, JSON.stringify(out));
