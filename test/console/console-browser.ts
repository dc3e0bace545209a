import { Browser, BrowserContext, BrowserContextOptions, chromium, Page } from 'playwright-core';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findChromium } = require('../support/chromium') as { findChromium(): { path?: string; reason?: string } };

export const CHROMIUM = findChromium();

/** `describe` where Debian's Chromium is found; elsewhere the suite is skipped, and says why. */
export function inBrowser(suite: string): jest.Describe {
  if (!CHROMIUM.path) process.stdout.write(`${suite} skipped: ${CHROMIUM.reason}\n`);
  return CHROMIUM.path ? describe : describe.skip;
}

export interface ConsoleBrowserSettings {
  /** Each context's options; every page is 1280 x 900 unless they say otherwise. */
  context?: BrowserContextOptions;
  /**
   * What a page may log as an error because a test provokes it: the
   * browser's line for a refused request, `status of 40` (4xx but 5xx) by default.
   */
  expectedErrors?: string;
  /** Accept every confirm() and alert(). */
  acceptDialogs?: boolean;
}

/**
 * One Chromium for a suite, launched before its tests and closed after
 * them, and a context of their own for each person who signs in (their own
 * cookies), as two people on two machines would have. No page may log an
 * error (a Content-Security-Policy violation shows up so): after each test
 * its contexts are closed and each must have logged none.
 */
export function consoleBrowser(serviceUrl: () => string, settings: ConsoleBrowserSettings = {}) {
  let browser: Browser;
  const contexts: { context: BrowserContext; problems: string[] }[] = [];
  const expected = settings.expectedErrors ?? 'status of 40';

  beforeAll(async () => {
    // Running as root (CI containers) needs --no-sandbox.
    browser = await chromium.launch({ executablePath: CHROMIUM.path, headless: true, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
  });

  afterEach(async () => {
    for (const { context, problems } of contexts.splice(0)) {
      await context.close();
      expect(problems).toEqual([]);
    }
  });

  /** A page in a fresh context, whose errors the test's end checks. */
  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...settings.context, ...options });
    const problems: string[] = [];
    contexts.push({ context, problems });
    const page = await context.newPage();
    page.on('console', (message) => message.type() === 'error' && !message.text().includes(expected) && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    if (settings.acceptDialogs) page.on('dialog', (dialog) => dialog.accept());
    return page;
  }

  /** Signs in with a staff token on the console's sign-in page, in a fresh context. */
  async function signIn(token: string, options: BrowserContextOptions = {}): Promise<Page> {
    const page = await newPage(options);
    await page.goto(`${serviceUrl()}/console`);
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('#sign-out');
    return page;
  }

  /** Opens a page of the console by its address and waits until it shows `selector`. */
  async function go(page: Page, hash: string, selector: string): Promise<void> {
    await page.goto(`${serviceUrl()}/console#/${hash}`);
    await page.waitForSelector(selector);
  }

  return { browser: () => browser, newPage, signIn, go };
}

/** Waits until `check` holds, asking every 200 ms; throws naming `what` after the timeout. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
