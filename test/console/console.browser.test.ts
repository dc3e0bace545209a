import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Page } from 'playwright-core';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { consoleBrowser, inBrowser, until } from './console-browser';

const ROOT = resolve(__dirname, '../..');
/** CONSOLE_SCREENSHOTS=dir npx jest test/console/console.browser.test.ts saves its pages there; docs/console.md's pictures come from console-screenshots.browser.test.ts. */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS && resolve(ROOT, process.env.CONSOLE_SCREENSHOTS);

const describeInBrowser = inBrowser('Console browser tests');

/**
 * The console as staff use it: Debian's Chromium, headless, driven by
 * playwright-core, against the real service on a real database. One
 * browser for the file; each person gets a context of their own (their own
 * cookies), as two people on two machines would.
 */
describeInBrowser('the staff console in a real browser', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let clerk: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  let seq = 0;

  const { signIn, go, browser } = consoleBrowser(() => service.url, { context: { acceptDownloads: true }, acceptDialogs: true });

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url });
    merchant = await provisionMerchant(service);
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    const admin = adminClient(service.url);
    clerk = await admin.createStaff('reconciler', 'Rita Reconciler');
    auditor = await admin.createStaff('auditor', 'Aldo Auditor');
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  async function shot(page: Page, name: string) {
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /** An order whose upstream result is unknown: the simulator takes account ids ending 999 and never answers. */
  async function unknownResultOrder(outTradeNo: string): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: `4${++seq}000999`, account_fields: { server_id: '7' } }),
    });
    expect(reply.status).toBe(202);
    const orderNo = reply.body.data.order_no as string;
    await until(`${orderNo} to reach the queue`, async () => (await stage(orderNo)) === 'unknown');
    return orderNo;
  }

  const stage = async (orderNo: string) => (await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo])).rows[0]?.stage;
  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  it('a clerk signs in, finds an order by out_trade_no, resolves it as success behind a confirmation, and sees the balance change', async () => {
    const orderNo = await unknownResultOrder('TICKET-4711');
    const signInPage = await browser().newPage();
    await signInPage.goto(`${service.url}/console`);
    await signInPage.waitForSelector('input[name=token]');
    await shot(signInPage, 'sign-in');
    await signInPage.close();

    const page = await signIn(clerk.token);
    // The token lives nowhere in the page: not in the URL, not in storage; the session is an HttpOnly, SameSite=Strict cookie.
    expect(page.url()).not.toContain(clerk.token);
    // Runs in the page; the test's own tsconfig has no DOM types.
    const stored = await page.evaluate(() => {
      const w = globalThis as unknown as { localStorage: object; sessionStorage: object; document: { cookie: string } };
      return JSON.stringify({ ...w.localStorage }) + JSON.stringify({ ...w.sessionStorage }) + w.document.cookie;
    });
    expect(stored).not.toContain(clerk.token);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'topup_console', httpOnly: true, sameSite: 'Strict', secure: false });
    expect(cookie.value).not.toContain(clerk.token);

    // The queue, oldest first, with the age shown.
    await page.waitForSelector(`a[href="#/order/${orderNo}"]`);
    expect(await text(page, 'main tbody tr')).toMatch(/TICKET-4711\t1\.20 USD\t\d+ s\t/);
    await shot(page, 'queue');
    // A clerk sees the clerk's pages, not the operator's.
    expect(await page.locator('header nav a').allInnerTexts()).toEqual(['Reconciliation', 'Orders', 'Approvals']);

    await page.click('header nav >> text=Orders');
    await page.fill('#order-search input[name=out_trade_no]', 'TICKET-4711');
    await page.click('#order-search button[type=submit]');
    await page.waitForSelector(`main table >> text=${orderNo}`);
    // Counted once the results have replaced the unfiltered list, which also shows the order.
    for (const deadline = Date.now() + 15_000; (await page.locator('main tbody tr').count()) !== 1 && Date.now() < deadline;) await page.waitForTimeout(100);
    expect(await page.locator('main tbody tr').count()).toBe(1);
    await shot(page, 'orders');

    await page.click(`main table >> text=${orderNo}`);
    await page.waitForSelector('#resolve');
    const before = await text(page, '#wallet');
    expect(before).toContain('balance 100.00 USD, frozen 1.20');
    await page.click('#requery');
    await page.waitForSelector('#resolve .notice');
    expect(await text(page, '#resolve .notice')).toContain('pending');
    await shot(page, 'order');

    await page.selectOption('#resolve-form select[name=outcome]', 'success');
    await page.fill('#resolve-form textarea[name=note]', 'Provider statement line 42 shows the top-up delivered');
    await page.click('#resolve-form button[type=submit]');
    // Nothing is resolved until the confirmation.
    await page.waitForSelector('#confirm-resolve');
    expect(await text(page, '.confirm')).toContain(`Resolve ${orderNo} as success?`);
    expect(await stage(orderNo)).toBe('unknown');
    await shot(page, 'order-confirm');
    await page.click('#confirm-resolve');

    await page.waitForSelector('#resolution');
    const resolution = await text(page, '#resolution');
    expect(resolution).toContain(clerk.staff_id);
    expect(resolution).toContain('Provider statement line 42 shows the top-up delivered');
    await until('the deduction to show on the page', async () => {
      await page.reload();
      await page.waitForSelector('#wallet');
      return (await text(page, '#wallet')).includes('balance 98.80 USD, frozen 0.00');
    });
    expect(await page.locator('#resolve').count()).toBe(0);
    expect(await text(page, 'main')).toContain('OrderResolved');
  });

  it('an auditor downloads a statement that verify-statement accepts, checks the chain and runs a clean verification', async () => {
    const page = await signIn(auditor.token);
    expect(await page.locator('header nav a').allInnerTexts()).toEqual(['Reconciliation', 'Orders', 'Approvals', 'Statements', 'Verification']);
    await go(page, 'statement', '#statement-form');
    await page.selectOption('#statement-form select[name=merchant_id]', merchant.merchantId);
    await page.click('#statement-form button[type=submit]');
    await page.waitForSelector('#chain .ok');
    expect(await text(page, '#chain')).toMatch(/Hash chain intact: \d+ events/);
    expect(await page.locator('svg.chart polyline').count()).toBe(2);
    await page.fill('#balance-form input[name=at]', '2099-01-01T00:00');
    await page.click('#balance-form button[type=submit]');
    await page.waitForSelector('#balance-form + div dl');
    await shot(page, 'statement');

    const dir = mkdtempSync(join(tmpdir(), 'console-statement-'));
    try {
      for (const format of ['csv', 'json']) {
        const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#download-${format}`)]);
        const file = join(dir, download.suggestedFilename());
        await download.saveAs(file);
        expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
        // Exactly what the auditors' guide tells an auditor to run.
        const check = spawnSync('npm', ['run', '--silent', 'verify-statement', '--', file], { cwd: ROOT, encoding: 'utf8' });
        expect({ format, status: check.status, out: check.stdout }).toEqual({
          format,
          status: 0,
          out: expect.stringMatching(/^OK: \d+ lines, revisions 0\.\.\d+, chain intact/),
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    await go(page, 'verify', '#verify-form');
    await page.click('#verify-form button[type=submit]');
    await page.waitForSelector('#verification .ok, #verification .bad, #verification .error');
    expect(await text(page, '#verification')).toMatch(/^Clean: \d+ events checked/);
    await shot(page, 'verify');
  });

  it('an auditor sees no resolve button, and the server refuses a forged resolve with the auditor’s session', async () => {
    const orderNo = await unknownResultOrder('TICKET-4712');
    const page = await signIn(auditor.token);
    await go(page, `order/${orderNo}`, 'main table');
    expect(await text(page, 'main')).toContain('OrderResultUnknown');
    expect(await page.locator('#resolve, #resolve-form, #requery').count()).toBe(0);

    const forged = await page.evaluate(async (path) => {
      const session = (await (await fetch('/console/session')).json()) as { data: { csrf_token: string } };
      const post = async (headers: Record<string, string>) => {
        const reply = await fetch(path, { method: 'POST', headers, body: JSON.stringify({ outcome: 'success', note: 'forged' }) });
        return { status: reply.status, body: await reply.json() };
      };
      return { withToken: await post({ 'x-csrf-token': session.data.csrf_token }), without: await post({}) };
    }, `/admin/v1/reconciliation/orders/${orderNo}/resolve`);
    expect(forged.withToken).toEqual({ status: 403, body: { success: false, code: 'FORBIDDEN', message: 'The auditor role may not call this route' } });
    expect(forged.without).toMatchObject({ status: 403, body: { success: false, code: 'CSRF_TOKEN_INVALID' } });
    expect(await stage(orderNo)).toBe('unknown');
  });

  it('a cross-site POST carrying the session cookie but not the CSRF token is refused, and changes nothing', async () => {
    const orderNo = await unknownResultOrder('TICKET-4713');
    // Another origin on the same host: the browser sends even a SameSite=Strict cookie there, so only the CSRF token stands in the way.
    const target = `${service.url}/admin/v1/reconciliation/orders/${orderNo}/resolve`;
    const attacker: Server = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(
        `<form id="f" method="POST" action="${target}" enctype="text/plain">` +
          `<input type="hidden" name='{"outcome":"success","note":"x","pad":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((done) => attacker.listen(0, '127.0.0.1', done));
    try {
      const page = await signIn(clerk.token);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === target),
        page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`),
      ]);
      expect(response.status()).toBe(403);
      expect(await response.json()).toMatchObject({ success: false, code: 'CSRF_TOKEN_INVALID' });
      expect(await stage(orderNo)).toBe('unknown');
    } finally {
      attacker.close();
    }
  });

  it('an operator creates a merchant and sees its secret exactly once, then walks the operator pages', async () => {
    const page = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, 'merchants', '#create-merchant');
    await page.fill('#create-merchant input[name=name]', 'Northwind Top-ups');
    await page.fill('#create-merchant input[name=callback_url]', 'https://northwind.example/topup/callback');
    await page.fill('#create-merchant input[name=ip_whitelist]', '127.0.0.1, 10.0.0.0/8');
    await page.click('#create-merchant button[type=submit]');
    await page.waitForSelector('#created .secret code.once');
    const secret = await text(page, '#created .secret code.once');
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await shot(page, 'merchant-created');
    const created = (await service.pool.query(`select merchant_id, api_key from merchants where name = 'Northwind Top-ups'`)).rows[0];
    // The secret shown is the merchant's: it signs requests.
    const balance = await signedFetch(service, { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: secret }, { path: '/api/v2/balance' });
    expect(balance.status).toBe(200);

    // ...and never again: not in the list, not on the merchant's page, not after a reload.
    await page.reload();
    await page.waitForSelector(`main table >> text=Northwind Top-ups`);
    expect(await page.content()).not.toContain(secret);
    await shot(page, 'merchants');
    await page.click('main table >> text=Northwind Top-ups');
    await page.waitForSelector('#merchant-settings');
    expect(await page.content()).not.toContain(secret);
    expect(await text(page, 'main')).toContain('127.0.0.1, 10.0.0.0/8');

    await page.fill('#deposit input[name=amount]', '250.00');
    await page.fill('#deposit input[name=reference]', 'bank-2026-11-25-001');
    await page.click('#deposit button[type=submit]');
    await page.waitForSelector('text=Deposited. Balance 250.00 USD');
    await page.fill('#set-price input[name=sku_id]', 'mlbb-86');
    await page.fill('#set-price input[name=price]', '1.15');
    await page.click('#set-price button[type=submit]');
    await page.waitForSelector('main table >> text=1.15');
    await shot(page, 'merchant');

    // Rotating with the default overlap: the new secret once, and both secrets verify until the overlap ends.
    await page.click('#rotate-secret button[type=submit]');
    await page.waitForSelector('#rotated .secret code.once');
    const rotated = await text(page, '#rotated .secret code.once');
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated).not.toBe(secret);
    for (const appSecret of [secret, rotated]) {
      const reply = await signedFetch(service, { merchantId: created.merchant_id, apiKey: created.api_key, appSecret }, { path: '/api/v2/balance' });
      expect(reply.status).toBe(200);
    }
    const { rows: overlap } = await service.pool.query('select previous_app_secret_valid_until - now() as left from merchants where merchant_id = $1', [
      created.merchant_id,
    ]);
    expect(overlap[0].left.hours).toBeGreaterThanOrEqual(23);
    await page.reload();
    await page.waitForSelector('#merchant-settings');
    expect(await page.content()).not.toContain(rotated);

    await page.click('#toggle-status');
    await page.waitForSelector('#toggle-status >> text=Reactivate');
    expect((await service.pool.query('select status from merchants where merchant_id = $1', [created.merchant_id])).rows[0].status).toBe('suspended');

    await go(page, 'catalogue', '#put-sku');
    await shot(page, 'catalogue');
    await go(page, 'staff', '#create-staff');
    await page.fill('#create-staff input[name=name]', 'Nina New');
    await page.click('#create-staff button[type=submit]');
    await page.waitForSelector('#staff-result .secret code.once');
    await shot(page, 'staff');
    await go(page, 'rebuild', '#start-rebuild');
    await page.selectOption('#start-rebuild select[name=projection]', 'orders');
    await page.click('#start-rebuild button[type=submit]');
    await page.waitForSelector('#rebuild-progress .pill.done', { timeout: 30_000 });
    await shot(page, 'rebuild');
    await go(page, 'status', 'main table');
    expect(await text(page, 'main')).toContain('Unknown results');
    await shot(page, 'status');
  });
});
