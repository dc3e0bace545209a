import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { PostgresSimulatorStore } from '../../src/fulfilment/simulator/simulator-store';
import { simulatorMigrations } from '../../src/fulfilment/simulator/simulator-store.migrations';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { adminClient } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { unknownNeverReceived } from '../support/reconciliation-orders';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { submitOrderMix } from './dashboard-orders';
import { ordersWithLostReplies } from './lost-replies';

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
  let admin: ReturnType<typeof adminClient>;
  let clerk: { token: string };
  let auditor: { token: string };

  beforeAll(async () => {
    db = await createTestDatabase();
    // Kept in Postgres, the simulator knows what it never received (the re-query's "a person decides").
    await migrate(db.pool, simulatorMigrations);
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 40, statusDelayMs: 30, store: new PostgresSimulatorStore(db.pool) });
    // Every fifth callback is refused once, so the acknowledged share is not a flat 100 %.
    let n = 0;
    endpoint = await callbackEndpoint((_order, attempt) => (attempt === 1 && ++n % 5 === 0 ? { status: 500 } : { status: 200, body: 'success' }));
    // The four-eyes rule over 25.00: the bulk apply of the outage below waits for a second person; a deposit of 20.00 does not.
    service = await startService(db, {
      ...FULFILMENT_ENV,
      ...CALLBACK_ENV,
      UPSTREAM_URL: simulator.url,
      UPSTREAM_TIMEOUT_MS: '1500',
      REQUERY_CONCURRENCY: '2',
      APPROVAL_THRESHOLD: '25.00',
    });
    merchant = await provisionMerchant(service, { deposit: 30_000n, callbackUrl: endpoint.url });
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    admin = adminClient(service.url);
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
    await operator.fill('#deposit input[name=amount]', '20.00');
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

    // An outage: 28 orders the upstream settled whose replies were lost, 2 it never received.
    const from = new Date(Date.now() - 1000).toISOString();
    await ordersWithLostReplies(service, merchant, simulator.url, [
      ...Array.from({ length: 20 }, (_, i) => `77${100 + i}123`),
      ...Array.from({ length: 8 }, (_, i) => `78${100 + i}000`),
    ]);
    for (let i = 0; i < 2; i++) await unknownNeverReceived(service, merchant);
    await new Promise((r) => setTimeout(r, 1000));
    const to = new Date().toISOString();

    // The upstream's report of the outage's window, fetched by the clerk.
    await go(asClerk, 'reports', '#fetch-report');
    await asClerk.fill('#fetch-report input[name=from]', from);
    await asClerk.fill('#fetch-report input[name=to]', to);
    await asClerk.click('#fetch-report button[type=submit]');
    await asClerk.waitForSelector('nav.groups');
    await shot(asClerk, 'report');
    // A malformed file: its errors line by line.
    const dir = mkdtempSync(join(tmpdir(), 'console-shots-'));
    try {
      const bad = join(dir, 'provider-2026-11-22.csv');
      writeFileSync(
        bad,
        [
          'order_no,status,amount,currency,reference,completed_at',
          'T01JD2X6Q3V8M4R7N5K9P2B6C0,shipped,1.2,USD,UP-1,2026-11-22T10:04:05Z',
          'T01JD2X6Q3V8M4R7N5K9P2B6C1,delivered,1.20,usd,UP-2,22/11/2026 10:05',
        ].join('\r\n') + '\r\n',
      );
      await go(asClerk, 'reports', '#upload-report');
      await asClerk.setInputFiles('#report-file', bad);
      await asClerk.click('#upload-report button[type=submit]');
      await asClerk.waitForSelector('#report-errors');
      await shot(asClerk, 'report-errors');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await go(asClerk, 'reports', 'main table a');
    await shot(asClerk, 'reports');

    // The whole queue, re-queried in one job, applied in one call with the two the upstream never received decided by hand.
    await go(asClerk, 'queue', '#select-page');
    // The queue fits on one page here: its box selects every order.
    await asClerk.check('#select-page');
    await shot(asClerk, 'queue-selected');
    await asClerk.click('#requery-selected');
    await asClerk.waitForSelector('#job-bar');
    await shot(asClerk, 'requery-progress');
    await asClerk.waitForSelector('#apply-form', { timeout: 60_000 });
    await shot(asClerk, 'requery-job');
    for (const select of await asClerk.locator('#decide select').all()) await select.selectOption('failed');
    await asClerk.fill('#apply-note', 'Outage of 22 Nov, 10:00-10:40: re-queried the upstream');
    await asClerk.click('#apply-form button[type=submit]');
    await asClerk.waitForSelector('#confirm-apply');
    await asClerk.locator('#apply .confirm').scrollIntoViewIfNeeded();
    await shot(asClerk, 'requery-apply');
    await asClerk.click('#confirm-apply');
    await asClerk.waitForSelector('#apply-result .notice.waiting');

    // A deposit over the threshold waits too; a second administrator's inbox.
    await go(operator, `merchant/${merchant.merchantId}`, '#deposit');
    await operator.fill('#deposit input[name=amount]', '5000.00');
    await operator.fill('#deposit input[name=reference]', 'bank-2026-11-25-002');
    await operator.fill('#deposit input[name=note]', 'Wire from Acme, statement line 7');
    await operator.click('#deposit button[type=submit]');
    await operator.waitForSelector('#deposit + div .notice.waiting');
    await operator.locator('#deposit').scrollIntoViewIfNeeded();
    await shot(operator, 'deposit-waiting');
    const ada = await admin.createStaff('admin', 'Ada Admin');
    const asAda = await open(ada.token);
    await go(asAda, 'approvals', 'article.approval');
    await shot(asAda, 'approvals');
    const bulk = asAda.locator('article.approval', { has: asAda.locator('h2:has-text("from re-query job")') });
    await bulk.locator('textarea[name=note]').fill('Totals checked against the upstream’s answers');
    await bulk.locator('button[data-decision=approve]').click();
    await bulk.locator('.confirm').scrollIntoViewIfNeeded();
    await shot(asAda, 'approval-confirm');
    await bulk.locator('.confirm button.danger').click();
    await asAda.waitForSelector('article.approval.approved');

    // A final order corrected by a wallet adjustment.
    const delivered = placed.find((p) => p.outcome === 'success')!.orderNo;
    await go(asClerk, `order/${delivered}`, '#adjustments');
    await asClerk.click('#correct-order summary');
    await asClerk.selectOption('#adjust-wallet select[name=direction]', 'credit');
    await asClerk.fill('#adjust-wallet input[name=reason]', 'UPSTREAM_REPORT_FAILED');
    await asClerk.fill('#adjust-wallet textarea[name=note]', 'The provider’s report of 22 Nov lists it as failed (line 14)');
    await asClerk.click('#adjust-wallet button[type=submit]');
    await asClerk.waitForSelector('#confirm-adjustment');
    await asClerk.locator('#adjustments').scrollIntoViewIfNeeded();
    await shot(asClerk, 'order-adjustment');
  }, 600_000);
});
