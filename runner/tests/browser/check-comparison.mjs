// Opens a page of `asr-ctk report compare --format html` in headless Chromium and reports
// what a reader of it sees, as one JSON object on stdout: the Rust test
// (runner/tests/it/browser.rs) holds the expectations, this script only looks.
//
// Usage: node check-comparison.mjs PAGE.html SCREENSHOT_DIR RULE
// Environment: PLAYWRIGHT_CORE (the package's directory), CHROMIUM (the browser's path).

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [pagePath, shots, rule] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
});
const url = pathToFileURL(path.resolve(pagePath)).href;
const out = {};

// Every request the page makes besides itself: a self-contained page makes none.
async function open(context, address) {
  const page = await context.newPage();
  const requests = [];
  await page.route('**/*', (route) => {
    const asked = route.request().url();
    if (asked.split('#')[0].split('?')[0] === url) return route.continue();
    requests.push(asked);
    return route.abort();
  });
  await page.goto(address, { waitUntil: 'load' });
  return { page, requests };
}

try {
  // Without JavaScript: the matrix reads, the filters (which need the script) do not show.
  const bare = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  {
    const { page, requests } = await open(bare, url);
    out.noScript = {
      matrixVisible: await page.locator('#matrix').isVisible(),
      rows: await page.locator('#matrix tbody tr').count(),
      visibleRows: await page.locator('#matrix tbody tr:visible').count(),
      filtersVisible: await page.locator('#filters').isVisible(),
      requests,
    };
  }
  await bare.close();

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, requests } = await open(context, url);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  out.matrix = {
    visible: await page.locator('#matrix').isVisible(),
    rows: await page.locator('#matrix tbody tr').count(),
    cells: await page.locator('#matrix tbody td[data-verdict]').count(),
    filtersVisible: await page.locator('#filters').isVisible(),
    count: await page.locator('#filter-count').textContent(),
  };
  await page.locator('#matrix-section').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'comparison-matrix.png') });

  // The filter by rule, typed as a person would.
  await page.locator('#filter-rule').fill(rule);
  const shown = await page.$$eval('#matrix tbody tr', (rows) =>
    rows.filter((tr) => tr.offsetParent !== null).map((tr) => tr.dataset.rule));
  out.filter = {
    rule,
    shownRules: shown,
    count: await page.locator('#filter-count').textContent(),
    disagreementsShown: await page.$$eval('#disagreement-table tbody tr', (rows) =>
      rows.filter((tr) => tr.offsetParent !== null).map((tr) => tr.dataset.rules)),
  };
  await page.locator('#matrix-section').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'comparison-filtered.png') });

  // The same filter from the address, as a shared link gives it.
  {
    const linked = await open(context, `${url}?rule=${encodeURIComponent(rule)}`);
    out.filterFromAddress = await linked.page.$$eval('#matrix tbody tr', (rows) =>
      rows.filter((tr) => tr.offsetParent !== null).map((tr) => tr.dataset.rule));
    await linked.page.close();
  }
  await page.locator('#filter-rule').fill('');

  // Sorting: a click on the matrix's Conformant heading orders its rows by that figure, a
  // second click the other way.
  const conformant = () => page.$$eval('#matrix tbody tr', (rows) =>
    rows.map((tr) => Number(tr.cells[2].getAttribute('data-value'))));
  out.sort = { before: await conformant() };
  await page.locator('#matrix thead th').nth(2).click();
  out.sort.once = await conformant();
  await page.locator('#matrix thead th').nth(2).click();
  out.sort.twice = await conformant();

  // Every link, followed in the page: where it lands, the element with its id is on screen.
  out.links = await page.evaluate(async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const anchors = Array.from(document.querySelectorAll('a[href]'));
    const result = { followed: 0, offPage: [], missing: [], notShown: [] };
    for (const a of anchors) {
      const href = a.getAttribute('href');
      if (!href.startsWith('#')) { result.offPage.push(href); continue; }
      const id = decodeURIComponent(href.slice(1));
      const target = document.getElementById(id);
      if (!target) { result.missing.push(href); continue; }
      a.click();
      if (location.hash !== href) await frame();
      const box = target.getBoundingClientRect();
      const shown = target.getClientRects().length > 0 && box.top < innerHeight && box.bottom > 0;
      if (!shown || location.hash !== href) result.notShown.push(href);
      result.followed += 1;
    }
    return result;
  });
  out.errors = errors;
  out.requests = requests;
  // The landing of one case's link, seen.
  const caseLink = page.locator('section#rules a[href^="#case-"]').first();
  if (await caseLink.count()) {
    await caseLink.click();
    await page.screenshot({ path: path.join(shots, 'comparison-case.png') });
  }
} finally {
  await browser.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
