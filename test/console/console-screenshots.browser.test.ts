import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { submitOrderMix } from './dashboard-orders';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findChromium } = require('../support/chromium') as { findChromium(): { path?: string; reason?: string } };

const ROOT = resolve(__dirname, '../..');
const CHROMIUM = findChromium();
/** SCREENSHOTS=1 npx jest test/console/console-screenshots.browser.test.ts renews the pictures in docs/console.md. */
const OUT = join(ROOT, 'docs/console');
const run = process.env.SCREENSHOTS === '1' && CHROMIUM.path ? describe : describe.skip;
/** The size every picture is taken at: a laptop's screen. */
const VIEWPORT = { width: 1280, height: 800 };

/**
 * The pictures of docs/console.md, one of every console page, taken in the
 * same Chromium and against the real service as the browser tests, from
 * data put through the service as a merchant and its staff would. Only
 * when asked (SCREENSHOTS=1): the tests check the pages, this only looks.
 */
run('pictures of every console page, for docs/console.md', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let endpoint: Awaited<ReturnType<typeof callbackEndpoint>>;
  let service: RunningService;
  let browser: Browser;
  let merchant: TestMerchant;
  let clerk: { token: string };
  let auditor: { token: string };

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 40 });
    // Every fifth callback is refused once, so the acknowledged share is not a flat 100 %.
    let n = 0;
    endpoint = await callbackEndpoint((_order, attempt) => (attempt === 1 && ++n % 5 === 0 ? { status: 500 } : { status: 200, body: 'success' }));
    service = await startService(db, { ...FULFILMENT_ENV, ...CALLBACK_ENV, UPSTREAM_URL: simulator.url, UPSTREAM_TIMEOUT_MS: '1500' });
    merchant = await provisionMerchant(service, { deposit: 30_000n, callbackUrl: endpoint.url });
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    const admin = adminClient(service.url);
    await admin('PATCH', `/admin/v1/merchants/${merchant.merchantId}`, { low_balance_threshold: '500.00' });
    clerk = await admin.createStaff('reconciler', 'Rita Reconciler');
    auditor = await admin.createStaff('auditor', 'Aldo Auditor');
    browser = await chromium.launch({ executablePath: CHROMIUM.path, headless: true, args: ['--no-sandbox'] });
    mkdirSync(OUT, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await endpoint?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  async function open(token?: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${service.url}/console`);
    if (!token) return page;
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('#sign-out');
    return page;
  }

  async function go(page: Page, hash: string, selector: string) {
    await page.goto(`${service.url}/console#/${hash}`);
    await page.waitForSelector(selector);
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });

  it('takes them', async () => {
    const signIn = await open();
    await signIn.waitForSelector('input[name=token]');
    await shot(signIn, 'sign-in');

    // Orders over a few minutes, so the dashboard's lines have a shape: each batch in a minute of its own.
    const batches = [
      { success: 6, failed: 1, unknown: 0 },
      { success: 9, failed: 2, unknown: 1 },
      { success: 4, failed: 0, unknown: 1 },
    ];
    const placed = [];
    for (const [i, mix] of batches.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 500));
      placed.push(...(await submitOrderMix(service, merchant, mix, `SHOT${i}`)));
    }
    const unknown = placed.filter((p) => p.outcome === 'unknown').map((p) => p.orderNo);
    await service.catchUp();

    const operator = await open(TEST_ENV.ADMIN_TOKEN);
    await operator.waitForSelector('#chart-orders svg.dash-svg');
    await shot(operator, 'dashboard');
    await operator.locator('#low-balance').scrollIntoViewIfNeeded();
    await shot(operator, 'dashboard-queues');

    const asClerk = await open(clerk.token);
    await go(asClerk, 'queue', `a[href="#/order/${unknown[0]}"]`);
    await shot(asClerk, 'queue');
    const { out_trade_no } = (await service.pool.query('select out_trade_no from rm_orders where order_no = $1', [unknown[0]])).rows[0];
    await go(asClerk, `orders?out_trade_no=${out_trade_no}`, `main table a[href="#/order/${unknown[0]}"]`);
    await shot(asClerk, 'orders');
    await go(asClerk, `order/${unknown[0]}`, '#resolve-form');
    await asClerk.click('#requery');
    await asClerk.waitForSelector('#resolve .notice');
    await shot(asClerk, 'order');
    await asClerk.selectOption('#resolve-form select[name=outcome]', 'success');
    await asClerk.fill('#resolve-form textarea[name=note]', 'Provider statement line 42 shows the top-up delivered');
    await asClerk.click('#resolve-form button[type=submit]');
    await asClerk.waitForSelector('.confirm');
    await shot(asClerk, 'order-confirm');

    const asAuditor = await open(auditor.token);
    await go(asAuditor, `statement?merchant_id=${merchant.merchantId}`, '#chain .ok, #chain .error');
    await shot(asAuditor, 'statement');
    await go(asAuditor, 'verify', '#verify-form');
    await asAuditor.click('#verify-form button[type=submit]');
    await asAuditor.waitForSelector('#verification .ok, #verification .bad');
    await shot(asAuditor, 'verify');

    await go(operator, 'merchants', '#create-merchant');
    await operator.fill('#create-merchant input[name=name]', 'Northwind Top-ups');
    await operator.fill('#create-merchant input[name=callback_url]', 'https://northwind.example/topup/callback');
    await operator.fill('#create-merchant input[name=ip_whitelist]', '203.0.113.7, 10.0.0.0/8');
    await operator.click('#create-merchant button[type=submit]');
    await operator.waitForSelector('#created .secret');
    await shot(operator, 'merchant-created');
    await operator.reload();
    await operator.waitForSelector('main table >> text=Northwind Top-ups');
    await shot(operator, 'merchants');
    await go(operator, `merchant/${merchant.merchantId}`, '#deposit');
    await operator.fill('#deposit input[name=amount]', '250.00');
    await operator.fill('#deposit input[name=reference]', 'bank-2026-11-25-001');
    await operator.click('#deposit button[type=submit]');
    await operator.waitForSelector('text=Deposited.');
    // The page from its top: the merchant's facts and the wallet the deposit redrew.
    await operator.evaluate('window.scrollTo(0, 0)');
    await shot(operator, 'merchant');
    await go(operator, 'catalogue', '#put-sku');
    await shot(operator, 'catalogue');
    await go(operator, 'staff', '#create-staff');
    await operator.fill('#create-staff input[name=name]', 'Nina New');
    await operator.click('#create-staff button[type=submit]');
    await operator.waitForSelector('#staff-result .secret');
    await shot(operator, 'staff');
    await go(operator, 'rebuild', '#start-rebuild');
    await operator.selectOption('#start-rebuild select[name=projection]', 'orders');
    await operator.click('#start-rebuild button[type=submit]');
    await operator.waitForSelector('#rebuild-progress .pill.done', { timeout: 30_000 });
    await shot(operator, 'rebuild');
    await go(operator, 'status', 'main table');
    await shot(operator, 'status');
  }, 600_000);
});
