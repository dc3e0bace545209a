import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { ADMIN } from '../back-office/admin-client';
import { consoleBrowser, inBrowser, until } from '../console/console-browser';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** axe-core's engine: evaluated in the page through the DevTools protocol, which the page's policy does not govern; never served by the service. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * The interactive reference at /docs, in Debian's Chromium against the real
 * service: it loads under its Content-Security-Policy without a violation
 * or an error (consoleBrowser fails a test on any), shows both documents,
 * finds an operation by what is typed in the filter, and sends real try-it
 * requests, the back office's with a bearer token and the merchant API's
 * signed in the page with a merchant's key and secret.
 */
inBrowser('API reference browser tests')('the API reference at /docs', () => {
  let db: TestDatabase;
  let service: RunningService;
  let merchant: TestMerchant;
  const browser = consoleBrowser(() => service.url, { expectedErrors: 'status of 401' });

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db);
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  /** The page, with every Content-Security-Policy violation it reports kept for the test to read (as a string: the tests' tsconfig has no DOM). */
  async function openReference(query = ''): Promise<Page> {
    const page = await browser.newPage();
    await page.addInitScript(`window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`);
    await page.goto(`${service.url}/docs${query}`);
    await page.waitForSelector('.opblock');
    return page;
  }

  const violations = (page: Page) => page.evaluate('window.cspViolations') as Promise<string[]>;
  /** Waits until the number of operations shown passes `test`; polled from here, as the page's policy refuses the evaluated strings of waitForFunction. */
  const shownCount = (page: Page, what: string, test: (count: number) => boolean) =>
    until(`${what} operations shown`, async () => test(await page.locator('.opblock').count()));
  /** "METHOD path summary" of each operation shown. */
  const operations = (page: Page) =>
    page.$$eval('.opblock-summary', (nodes) =>
      nodes.map((n) =>
        ['.opblock-summary-method', '.opblock-summary-path', '.opblock-summary-description']
          .map((part) => (n.querySelector(part)?.textContent ?? '').trim())
          .join(' '),
      ),
    );
  /** Waits until the page shows exactly this one operation. */
  const showing = (page: Page, operation: string) =>
    until(`only ${operation} shown`, async () => JSON.stringify(await operations(page)) === JSON.stringify([operation]));
  const served = async (file: string) => (await (await fetch(`${service.url}/docs/${file}`)).json()) as { paths: Record<string, object> };

  it('shows both documents, every operation of each, under its policy and with nothing fetched from elsewhere', async () => {
    const page = await openReference();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const merchantPaths = Object.keys((await served('merchant-api.json')).paths);
    expect((await operations(page)).map((text) => text.split(' ')[1]).sort()).toEqual([...merchantPaths].sort());
    expect(await operations(page)).toContain('POST /api/v2/topup/submit Submit a top-up order');
    expect(await page.isVisible('#signing')).toBe(true);

    await page.click('button[data-document=back-office]');
    await page.waitForSelector('.opblock-tag');
    await shownCount(page, 'over 40', (n) => n > 40);
    const backOffice = await served('back-office.json');
    const shown = new Set(await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.getAttribute('data-path'))));
    expect(Object.keys(backOffice.paths).filter((path) => !shown.has(path))).toEqual([]);
    expect(await page.isVisible('#signing')).toBe(false);
    expect(page.url()).toMatch(/\?doc=back-office/);

    expect(await violations(page)).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
    const headers = (await page.request.get(`${service.url}/docs`)).headers();
    expect(headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(headers['content-security-policy']).not.toMatch(/unsafe-eval/);
  });

  it('finds an operation by a word of its path or summary, in either document', async () => {
    const page = await openReference();
    await page.fill('.operation-filter-input', 'verify-signature');
    await showing(page, 'POST /api/v2/tools/verify-signature Debug a signature');
    expect(await operations(page)).toEqual([expect.stringMatching(/^POST \/api\/v2\/tools\/verify-signature/)]);

    await page.click('button[data-document=back-office]');
    await page.fill('.operation-filter-input', '');
    await shownCount(page, 'over 40', (n) => n > 40);
    // Words of the method and the path, in any order and case.
    await page.fill('.operation-filter-input', 'deposits POST');
    await showing(page, 'POST /admin/v1/merchants/{merchant_id}/deposits Credit a wallet');
    expect(await operations(page)).toEqual(['POST /admin/v1/merchants/{merchant_id}/deposits Credit a wallet']);
    // Words of the summary.
    await page.fill('.operation-filter-input', 'rotate the app secret');
    await showing(page, 'POST /admin/v1/merchants/{merchant_id}/app-secret Rotate the app secret');
    expect(await operations(page)).toEqual(['POST /admin/v1/merchants/{merchant_id}/app-secret Rotate the app secret']);
    expect(await violations(page)).toEqual([]);
  });

  it('tries a back-office route with a bearer token, for a real 200', async () => {
    const page = await openReference('?doc=back-office');
    await page.click('.auth-wrapper .authorize');
    const dialog = page.locator('.modal-ux').filter({ hasText: 'StaffToken' });
    await dialog.locator('input').first().fill(ADMIN);
    await dialog.locator('button.authorize').first().click();
    await page.click('.modal-ux .close-modal');

    const operation = page.locator('#operations-Operations-get_admin_v1_status, .opblock-get').filter({ hasText: '/admin/v1/status' }).first();
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    const [reply] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/admin/v1/status')), operation.locator('.execute').click()]);
    expect(reply.status()).toBe(200);
    expect(reply.request().headers().authorization).toBe(`Bearer ${ADMIN}`);
    const shownStatus = operation.locator('.live-responses-table tbody .response-col_status').first();
    await shownStatus.waitFor();
    expect((await shownStatus.textContent())?.trim()).toBe('200');
    expect(await violations(page)).toEqual([]);
  });

  it("signs a merchant API try-it with the merchant's key and secret, for a real success", async () => {
    const page = await openReference();
    const submit = page.locator('.opblock-post').filter({ hasText: '/api/v2/topup/submit' }).first();
    await submit.locator('.opblock-summary').click();
    await submit.locator('.try-out__btn').click();

    // Unsigned first: the service says which header is missing.
    const [unsigned] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/v2/topup/submit')), submit.locator('.execute').click()]);
    expect(unsigned.status()).toBe(401);
    expect(await unsigned.json()).toMatchObject({ code: 'MISSING_AUTH_HEADER' });
    await page.waitForSelector('#signing-status:has-text("Not signed")');

    await page.fill('#api-key', merchant.apiKey);
    await page.fill('#app-secret', merchant.appSecret);
    // The example body the document gives, as Swagger UI filled it in: sent, and signed, byte for byte.
    const [signed] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/v2/topup/submit')), submit.locator('.execute').click()]);
    expect(signed.status()).toBe(202);
    expect(await signed.json()).toMatchObject({ success: true, code: 'ACCEPTED', data: { out_trade_no: 'A-1', sku_id: 'mlbb-86', status: 'processing' } });
    const sent = signed.request().headers();
    expect(sent['x-api-key']).toBe(merchant.apiKey);
    expect(sent['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    await page.waitForSelector(`#signing-status:has-text("Signed POST /api/v2/topup/submit")`);

    // The same body again, signed anew (a fresh nonce): the existing order.
    const [again] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/v2/topup/submit')), submit.locator('.execute').click()]);
    expect([again.status(), (await again.json()).code]).toEqual([200, 'DUPLICATE']);
    expect(again.request().headers()['x-nonce']).not.toBe(sent['x-nonce']);

    // Nothing of the credentials is kept by the browser.
    const stored = (await page.evaluate('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })')) as string;
    expect(stored).not.toContain(merchant.appSecret);
    expect(stored).not.toContain(merchant.apiKey);
    expect(await violations(page)).toEqual([]);
  });

  /** axe-core's WCAG 2.0 and 2.1 A and AA rules and its best practices on the page as it stands: every violation, whatever its impact. */
  async function audit(page: Page): Promise<Violation[]> {
    if (!(await page.evaluate('typeof axe === "object"'))) await page.evaluate(AXE_SOURCE);
    return (await page.evaluate(`axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'], resultTypes: ['violations'] })
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as Violation[];
  }

  it('passes axe-core on both documents, an operation open for try-it and the Authorize dialog', async () => {
    const page = await openReference();
    const submit = page.locator('.opblock-post').filter({ hasText: '/api/v2/topup/submit' }).first();
    await submit.locator('.opblock-summary').click();
    await submit.locator('.try-out__btn').click();
    const found: Record<string, Violation[]> = { merchantApi: await audit(page) };
    await page.click('button[data-document=back-office]');
    await shownCount(page, 'over 40', (n) => n > 40);
    found.backOffice = await audit(page);
    await page.click('.auth-wrapper .authorize');
    await page.waitForSelector('.modal-ux');
    found.authorize = await audit(page);
    // What is left is Swagger UI's own structure, moderate, and kept to these places: its tags and its dialogs' titles are h3 below
    // its title's h1, and its title and servers sit outside its <main> (the page has no main of its own, so that there is one).
    const left = (violations: Violation[]) =>
      violations.map(({ id, impact, nodes }) => `${impact} ${id}: ${nodes.map((node) => node.replace(/-tag-.*/, '-tag-*')).join(', ')}`);
    const structure = (headings: string) => [
      `moderate heading-order: ${headings}`,
      expect.stringMatching(/^moderate region: \.information-container, \.schemes-server-container, /),
    ];
    expect({ merchantApi: left(found.merchantApi), backOffice: left(found.backOffice), authorize: left(found.authorize) }).toEqual({
      merchantApi: structure('#operations-tag-*'),
      backOffice: structure('#operations-tag-*'),
      authorize: structure('.modal-ux-header > h3'),
    });
  });
});
