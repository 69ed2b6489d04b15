// The book's search pages as a reader uses them, in Debian's headless Chromium: for each query of
// the config, open <page>?q=<query> and wait for Sphinx's search to finish; report the pages found.
//
// Usage: node search_book.mjs config.json   (written by tests/browser_support.py: baseUrl, chromium,
// result, searches: [{page, query}])
import { readFileSync, writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const browser = await chromium.launch({
  executablePath: config.chromium,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"],
});
const results = [];
try {
  const context = await browser.newContext();
  // Only the book's own server: the search page needs nothing else.
  await context.route("**/*", (route) =>
    route.request().url().startsWith(config.baseUrl) ? route.continue() : route.abort("blockedbyclient"));
  for (const { page: path, query } of config.searches) {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${config.baseUrl}${path}?q=${encodeURIComponent(query)}`, { waitUntil: "load", timeout: 120000 });
    // Sphinx writes its summary ("Search finished, found N pages..." or its translation) when done.
    await page.waitForFunction(() => {
      const summary = document.querySelector("#search-results p.search-summary");
      return summary && summary.textContent.trim().length > 0;
    }, null, { timeout: 60000 });
    const found = await page.$$eval("#search-results ul.search li a", (as) => as.map((a) => a.getAttribute("href")));
    results.push({ page: path, query, found, errors });
    await page.close();
  }
} finally {
  await browser.close();
}
writeFileSync(config.result, JSON.stringify(results));
