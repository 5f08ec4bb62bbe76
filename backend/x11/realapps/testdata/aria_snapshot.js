// The reference the tree-size benchmark compares tree_text with: the
// Playwright snapshot for models (ariaSnapshot with mode "ai", a ref on
// every interactive element) of a page, taken with playwright-core driving
// the system Chromium.
//   node aria_snapshot.js PLAYWRIGHT_CORE_DIR URL
// prints the snapshot on standard output.
const { chromium } = require(process.argv[2]);

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 560 } });
    await page.goto(process.argv[3]);
    process.stdout.write(await page.locator('body').ariaSnapshot({ mode: 'ai' }));
  } finally {
    await browser.close();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
