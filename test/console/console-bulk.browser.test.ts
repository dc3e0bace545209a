import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { PostgresSimulatorStore } from '../../src/fulfilment/simulator/simulator-store';
import { simulatorMigrations } from '../../src/fulfilment/simulator/simulator-store.migrations';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { adminClient } from '../back-office/admin-client';
import { checkEventInvariants } from '../support/invariants';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { awaitStage, submitOrder, unknownNeverReceived } from '../support/reconciliation-orders';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { consoleBrowser, inBrowser } from './console-browser';

const describeInBrowser = inBrowser('Console bulk reconciliation browser tests');

/** Delivered by the upstream (accounts ending 123), refused (ending 000); every one unknown to the service. */
const DELIVERED = 100;
const REFUSED = 50;
/**
 * The upstream answers orders after the service stopped waiting
 * (UPSTREAM_TIMEOUT_MS), and status queries long before it, even on a
 * loaded CI machine (300 ms was too short there for 2 of 152 queries).
 */
const UPSTREAM_TIMEOUT_MS = 1_000;
const UPSTREAM_DELAY_MS = 1_500;

type Staff = { staff_id: string; token: string };

/**
 * An upstream outage cleared in the console, as a clerk meets one: 152
 * orders whose result the service does not know (150 the upstream
 * delivered or refused, 2 it never received), all selected in the queue, re-queried in one job with a progress bar, applied in one call
 * with the 2 decided by hand, approved by a second clerk in the inbox
 * (APPROVAL_THRESHOLD 100.00), and the money checked to the cent. Then an
 * upstream's report, uploaded as a file and fetched for a window: its
 * categories, its errors when malformed, its export and its apply.
 */
describeInBrowser('bulk reconciliation in the console', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;
  let clara: Staff;
  let chen: Staff;

  const { signIn, go } = consoleBrowser(() => service.url, { context: { acceptDownloads: true }, expectedErrors: 'status of 4' });

  beforeAll(async () => {
    db = await createTestDatabase();
    // Kept in Postgres, the simulator knows what it never received: "not received", not "unknown".
    await migrate(db.pool, simulatorMigrations);
    simulator = await startUpstreamSimulator({
      deliveryDelayMs: UPSTREAM_DELAY_MS,
      failureDelayMs: UPSTREAM_DELAY_MS,
      statusDelayMs: 40,
      store: new PostgresSimulatorStore(db.pool),
    });
    service = await startService(db, {
      ...FULFILMENT_ENV,
      FULFILMENT_CONCURRENCY: '64',
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      UPSTREAM_URL: simulator.url,
      REQUERY_CONCURRENCY: '8',
      APPROVAL_THRESHOLD: '100.00',
    });
    admin = adminClient(service.url);
    clara = await admin.createStaff('reconciler', 'Clara Clerk');
    chen = await admin.createStaff('reconciler', 'Chen Checker');
  });

  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  const text = (page: Page, selector: string) => page.locator(selector).innerText();
  /** The wallet in cents, from the merchant API (the wallet itself). */
  const wallet = async (merchant: TestMerchant) => {
    const w = (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
    const cents = (amount: string) => Math.round(Number(amount) * 100);
    return { balance: cents(w.balance), frozen: cents(w.frozen_balance), available: cents(w.available_balance) };
  };

  /** Orders the upstream delivers or refuses only after the service stopped waiting: each one's result is unknown to it. */
  async function outage(merchant: TestMerchant, delivered: number, refused: number, tag: number) {
    const orders = { delivered: [] as string[], refused: [] as string[] };
    for (let i = 0; i < delivered + refused; i++) {
      const isDelivered = i < delivered;
      (isDelivered ? orders.delivered : orders.refused).push(await submitOrder(service, merchant, `${tag}${1000 + i}${isDelivered ? '123' : '000'}`));
    }
    await awaitStage(service, [...orders.delivered, ...orders.refused], 'unknown', 60_000);
    await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
    return orders;
  }

  it('clears 152 unknown-result orders: select all in the queue, one re-query with a progress bar, one apply, one approval by another clerk', async () => {
    const merchant = await provisionMerchant(service, { deposit: 100_000n });
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    const orders = await outage(merchant, DELIVERED, REFUSED, 4);
    const neverReceived = [await unknownNeverReceived(service, merchant), await unknownNeverReceived(service, merchant)];
    const all = DELIVERED + REFUSED + neverReceived.length;
    const before = await wallet(merchant);
    expect(before).toEqual({ balance: 100_000, frozen: all * 120, available: 100_000 - all * 120 });

    // The queue: the box in the head selects the page, then "all in the queue" beyond it.
    const asClara = await signIn(clara.token);
    await asClara.waitForSelector('#selection-bar');
    expect(await text(asClara, '#queue-summary')).toContain(`${all} orders with an unknown upstream result`);
    await asClara.check('#select-page');
    expect(await text(asClara, '#selection-said')).toContain('The 50 orders on this page are selected.');
    await asClara.click('#select-all');
    expect(await text(asClara, '#selection-said')).toContain(`All ${all} orders in the queue are selected.`);
    expect(await text(asClara, '#requery-selected')).toBe(`Re-query all ${all} orders in the queue`);
    await asClara.click('#requery-selected');

    // The job's page: a progress bar, redrawn until every order has its answer.
    await asClara.waitForSelector('#job-bar');
    expect(asClara.url()).toMatch(/#\/requery\/rq_/);
    const jobId = asClara.url().split('/').pop() as string;
    await asClara.waitForSelector('#job-progress .pill.done', { timeout: 60_000 });
    expect(await asClara.locator('#job-bar').evaluate((bar) => [bar.getAttribute('value'), bar.getAttribute('max')])).toEqual([String(all), String(all)]);
    expect(await text(asClara, '#job-asked')).toBe(`${all} of ${all} orders asked`);
    expect(await text(asClara, '#job-answers')).toContain(`delivered ${DELIVERED}, refused ${REFUSED}`);
    await asClara.waitForSelector('#apply-form');

    // Grouped by proposal: the groups count, and a group shows its orders.
    const groups = await asClara.locator('nav.groups a').allInnerTexts();
    expect(groups).toEqual([
      `All (${all})`,
      `Resolve as success (${DELIVERED})`,
      `Resolve as failed (${REFUSED})`,
      'Leave: nothing to decide yet (0)',
      'A person decides (2)',
    ]);
    await asClara.click('nav.groups a:has-text("Resolve as failed")');
    await asClara.waitForSelector('nav.groups a[aria-current=page]:has-text("Resolve as failed")');
    await asClara.waitForSelector('main table >> text=refused');
    expect(await asClara.locator('main > table tbody tr').count()).toBe(REFUSED);

    // The two the upstream never received: the clerk decides each. Then the note, and the confirmation with the sums per outcome.
    await asClara.waitForSelector('#decide select');
    for (const orderNo of neverReceived) await asClara.selectOption(`#decide select[name="outcome-${orderNo}"]`, 'failed');
    await asClara.fill('#apply-note', 'Outage of today: re-queried the upstream');
    await asClara.click('#apply-form button[type=submit]');
    await asClara.waitForSelector('#confirm-apply');
    const confirmation = await text(asClara, '#apply .confirm');
    expect(confirmation).toContain(`Resolve ${all} orders?`);
    expect(confirmation).toContain(`${DELIVERED} orders resolved as success: ${(DELIVERED * 1.2).toFixed(2)} USD deducted`);
    expect(confirmation).toContain(`${REFUSED + 2} orders resolved as failed (2 of them as you chose): ${((REFUSED + 2) * 1.2).toFixed(2)} USD released`);
    expect(await wallet(merchant)).toEqual(before);
    await asClara.click('#confirm-apply');

    // Over the threshold: one request, and nothing moved.
    await asClara.waitForSelector('#apply-result .notice.waiting');
    expect(await text(asClara, '#apply-result .notice.waiting')).toContain(`Resolve ${all} orders from re-query job ${jobId}`);
    expect(await wallet(merchant)).toEqual(before);
    await asClara.click('#apply-result .notice.waiting a');
    await asClara.waitForSelector('article.approval');
    expect(await asClara.locator('article.approval button[data-decision=approve]').count()).toBe(0);

    // Another clerk approves it in the inbox.
    const asChen = await signIn(chen.token);
    await go(asChen, 'approvals?status=pending&kind=bulk_resolution', 'article.approval');
    const request = asChen.locator('article.approval').first();
    const shown = await request.innerText();
    expect(shown).toContain('Clara Clerk');
    expect(shown).toContain(`${(all * 1.2).toFixed(2)} USD`);
    expect(shown).toContain(`re-query job ${jobId}`);
    await request.locator('textarea[name=note]').fill('Totals checked against the upstream’s answers');
    await request.locator('button[data-decision=approve]').click();
    await request.locator('.confirm button.danger').click();
    await asChen.waitForSelector('article.approval.approved', { timeout: 60_000 });
    expect(await text(asChen, 'article.approval.approved')).toContain(`${all} applied, 0 already applied, 0 skipped, 0 refused`);

    // The money, to the cent: the delivered deducted, the rest released, nothing frozen.
    await awaitStage(service, orders.delivered, 'succeeded', 60_000);
    await awaitStage(service, [...orders.refused, ...neverReceived], 'failed', 60_000);
    expect(await wallet(merchant)).toEqual({ balance: 100_000 - DELIVERED * 120, frozen: 0, available: 100_000 - DELIVERED * 120 });
    const resolved = (await service.store.readStream(`order-${neverReceived[0]}`)).find((e) => e.type === 'OrderResolved');
    expect(resolved?.data).toMatchObject({ outcome: 'failed', resolvedBy: clara.staff_id, approvedBy: chen.staff_id, evidence: { source: 'requery', jobId } });

    // The job's page says what was applied, by whom.
    await go(asClara, `requery/${jobId}?proposal=success`, 'main table');
    expect(await text(asClara, 'main table tbody tr:first-child')).toContain('applied as success by Clara Clerk, approved by Chen Checker');
    // The queue is empty of them.
    await go(asClara, 'queue', '#queue-summary');
    expect(await text(asClara, '#queue-summary')).toContain('0 orders with an unknown upstream result');
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
  }, 180_000);

  it('an upstream report: a malformed file shows its errors line by line; a good one, uploaded or fetched, is categorised, paged, exported and applied', async () => {
    const merchant = await provisionMerchant(service, { deposit: 10_000n });
    const from = new Date(Date.now() - 1000);
    const orders = await outage(merchant, 3, 2, 5);
    const to = new Date(Date.now() + 1000);
    const dir = mkdtempSync(join(tmpdir(), 'console-report-'));
    try {
      const asClara = await signIn(clara.token);
      await go(asClara, 'reports', '#upload-report');

      // A malformed report: kept, its errors by line and column, nothing to apply.
      const bad = join(dir, 'provider-bad.csv');
      writeFileSync(bad, `order_no,status,amount,currency,reference,completed_at\r\n${orders.delivered[0]},shipped,1.2,USD,X,2026-11-22T10:00:00Z\r\n`);
      await asClara.setInputFiles('#report-file', bad);
      await asClara.click('#upload-report button[type=submit]');
      await asClara.waitForSelector('#report-errors');
      expect(await text(asClara, '#report-errors [role=alert]')).toContain('nothing in it can be applied');
      const errors = await text(asClara, '#report-errors table');
      expect(errors).toMatch(/2\tstatus\t/);
      expect(errors).toMatch(/2\tamount\t/);
      expect(await asClara.locator('#apply-form').count()).toBe(0);

      // A good one, as the provider sent it: the unknown orders, one line that is not ours.
      const good = join(dir, 'provider-good.csv');
      const line = (orderNo: string, status: string) => `${orderNo},${status},1.20,USD,REF-${orderNo},${new Date().toISOString()}`;
      writeFileSync(
        good,
        [
          'order_no,status,amount,currency,reference,completed_at',
          ...orders.delivered.map((o) => line(o, 'delivered')),
          ...orders.refused.map((o) => line(o, 'failed')),
          line('T00000000000000000000000000', 'delivered'),
        ].join('\r\n') + '\r\n',
      );
      await go(asClara, 'reports', '#upload-report');
      await asClara.setInputFiles('#report-file', good);
      await asClara.click('#upload-report button[type=submit]');
      await asClara.waitForSelector('nav.groups');
      expect(await asClara.locator('nav.groups a').allInnerTexts()).toEqual([
        'All (6)',
        'Matched (0)',
        'Resolvable (5)',
        'Exceptions (0)',
        'Missing (1)',
        'In flight (0)',
      ]);
      expect(await text(asClara, '#report-facts')).toContain('uploaded as provider-good.csv');
      expect(await text(asClara, '#report-facts')).toContain('Clara Clerk');
      await asClara.click('nav.groups a:has-text("Missing")');
      await asClara.waitForSelector('nav.groups a[aria-current=page]:has-text("Missing")');
      expect(await text(asClara, 'main > table tbody')).toContain('no order of ours');

      // The file as received, byte for byte: the evidence each resolution's report id points to.
      const [original] = await Promise.all([asClara.waitForEvent('download'), asClara.click('#report-original')]);
      const received = join(dir, `received-${original.suggestedFilename()}`);
      await original.saveAs(received);
      expect(readFileSync(received)).toEqual(readFileSync(good));

      // The export, as the finance team gets it.
      const [download] = await Promise.all([asClara.waitForEvent('download'), asClara.click('#export-missing')]);
      const file = join(dir, download.suggestedFilename());
      await download.saveAs(file);
      expect(download.suggestedFilename()).toMatch(/^report-rp_.*-missing\.csv$/);

      // Applied under the threshold: it moves at once.
      const before = await wallet(merchant);
      await asClara.fill('#apply-note', 'Provider report of today');
      await asClara.click('#apply-form button[type=submit]');
      await asClara.waitForSelector('#confirm-apply');
      expect(await text(asClara, '#apply .confirm')).toContain('3 orders resolved as success: 3.60 USD deducted');
      expect(await text(asClara, '#apply .confirm')).toContain('2 orders resolved as failed: 2.40 USD released');
      await asClara.click('#confirm-apply');
      await asClara.waitForSelector('#applied');
      expect(await text(asClara, '#applied')).toContain('Applied: 5 applied, 0 already applied, 0 skipped, 0 refused.');
      await awaitStage(service, orders.delivered, 'succeeded');
      await awaitStage(service, orders.refused, 'failed');
      expect(await wallet(merchant)).toEqual({ balance: before.balance - 360, frozen: before.frozen - 600, available: before.available + 240 });

      // Fetched from the upstream for the window: the same orders now match.
      await go(asClara, 'reports', '#fetch-report');
      await asClara.fill('#fetch-report input[name=from]', from.toISOString());
      await asClara.fill('#fetch-report input[name=to]', to.toISOString());
      await asClara.click('#fetch-report button[type=submit]');
      await asClara.waitForSelector('#report-facts');
      expect(await text(asClara, '#report-facts')).toContain('fetched from the upstream');
      expect(await asClara.locator('nav.groups a').first().innerText()).toMatch(/^All \(\d+\)$/);
      expect(await text(asClara, 'nav.groups')).toContain('Matched (5)');
      await go(asClara, 'reports', 'main table');
      expect(await asClara.locator('main table tbody tr').count()).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
