import { readFileSync } from 'node:fs';
import { Page } from 'playwright-core';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import type { DashboardView } from '../../src/back-office/replies.public';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { consoleBrowser, inBrowser } from './console-browser';
import { submitOrderMix } from './dashboard-orders';

const describeInBrowser = inBrowser('Console dashboard tests');

/** axe-core's engine, handed to the page through the DevTools protocol as the accessibility test does: the CSP stays on. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const MIX = { success: 3, failed: 2, unknown: 1 };
const ACCEPTED = MIX.success + MIX.failed + MIX.unknown;

/**
 * The operations dashboard drawn from real orders: submitted through the
 * merchant API with fulfilment on against the built-in simulator, so the
 * charts show what the service's own events say, in the same Chromium as
 * the other console tests.
 */
describeInBrowser('the operations dashboard in a real browser', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let clerk: { staff_id: string; token: string };

  const { signIn } = consoleBrowser(() => service.url, { context: { viewport: { width: 1280, height: 800 } } });

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    // A timeout long enough that a busy machine does not make a delivered order unknown; 999 still never answers.
    service = await startService(db, { ...FULFILMENT_ENV, UPSTREAM_URL: simulator.url, UPSTREAM_TIMEOUT_MS: '1500' });
    merchant = await provisionMerchant(service);
    const admin = adminClient(service.url);
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    const threshold = await admin('PATCH', `/admin/v1/merchants/${merchant.merchantId}`, { low_balance_threshold: '500.00' });
    expect(threshold.status).toBe(200);
    clerk = await admin.createStaff('reconciler', 'Rita Reconciler');
    await submitOrderMix(service, merchant, MIX, 'DASH');
    // The per-minute rollups are a projection: wait until the dashboard's reply counts every order.
    await until('the dashboard to count the orders', async () => {
      const totals = outcomes(await dashboard('1h'));
      return totals.accepted === ACCEPTED && totals.success === MIX.success && totals.failed === MIX.failed && totals.unknown === MIX.unknown;
    });
  });

  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  async function dashboard(window: '1h' | '24h'): Promise<DashboardView> {
    const reply = await adminClient(service.url)('GET', `/admin/v1/operations/dashboard?window=${window}`);
    expect(reply.status).toBe(200);
    return (reply.body as { data: DashboardView }).data;
  }

  const outcomes = (d: DashboardView) => {
    const total = (key: keyof DashboardView['series'][number]['orders']) => d.series.reduce((sum, p) => sum + p.orders[key], 0);
    return { accepted: total('accepted'), success: total('success'), failed: total('failed'), unknown: total('unknown') };
  };

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The values a chart's marks carry, summed per series: what the picture is drawn from. */
  const drawn = (page: Page, chart: string) =>
    page.evaluate(
      `(() => {
        const sums = {};
        for (const mark of document.querySelectorAll('${chart} svg [data-value]')) {
          const series = mark.getAttribute('data-series') ?? mark.closest('[data-series]')?.getAttribute('data-series');
          sums[series] = (sums[series] ?? 0) + Number(mark.getAttribute('data-value'));
        }
        return sums;
      })()`,
    ) as Promise<Record<string, number>>;

  /** A chart's text alternative: its table's rows, each cell's text. */
  const figures = (page: Page, chart: string) =>
    page.$$eval(`${chart} details table tbody tr`, (rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent ?? '')));

  it('an operator lands on the dashboard and sees the orders, the upstream, the queue and the low-balance merchant drawn from the service', async () => {
    const page = await signIn(TEST_ENV.ADMIN_TOKEN);
    await page.waitForSelector('#chart-orders svg.dash-svg');
    expect(page.url()).toMatch(/#\/dashboard$/);
    expect(await page.locator('h1').innerText()).toBe('Operations dashboard');
    expect(await page.locator('header nav a[aria-current=page]').allInnerTexts()).toEqual(['Dashboard']);

    // Orders by outcome: the points drawn add up to the orders put through, and so does the table beside them.
    expect(await drawn(page, '#chart-orders')).toEqual({ accepted: ACCEPTED, success: MIX.success, failed: MIX.failed, unknown: MIX.unknown });
    const rows = await figures(page, '#chart-orders');
    const column = (i: number) => rows.reduce((sum, row) => sum + Number(row[i]), 0);
    expect([column(1), column(2), column(3), column(4)]).toEqual([ACCEPTED, MIX.success, MIX.failed, MIX.unknown]);
    expect(rows[0][0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(await page.locator('#chart-orders-summary').innerText()).toContain(
      `${ACCEPTED} accepted, ${MIX.success} success, ${MIX.failed} failed, ${MIX.unknown} unknown`,
    );
    expect(await page.locator('#chart-orders svg.dash-svg').getAttribute('aria-labelledby')).toBe('chart-orders-title chart-orders-summary');
    expect(await page.locator('#chart-orders .dash-legend li').allInnerTexts()).toEqual([
      `accepted (${ACCEPTED})`,
      `success (${MIX.success})`,
      `failed (${MIX.failed})`,
      `unknown (${MIX.unknown})`,
    ]);
    // The time axis is labelled in UTC.
    expect(await page.locator('#chart-orders .time-axis text').allTextContents()).toEqual(expect.arrayContaining(['UTC']));
    expect(await page.locator('#chart-orders .time-axis text').first().textContent()).toMatch(/^\d\d:\d0$/);

    // The upstream: its answers as the service counted them, stacked; its latency as lines.
    const reply = await dashboard('1h');
    const answered = (key: 'delivered' | 'refused' | 'unknown') => reply.series.reduce((sum, p) => sum + p.upstream[key], 0);
    expect(answered('delivered')).toBe(MIX.success);
    expect(answered('refused')).toBe(MIX.failed);
    const answers = await drawn(page, '#chart-answers');
    expect({ delivered: answers.delivered, refused: answers.refused }).toEqual({ delivered: MIX.success, refused: MIX.failed });
    expect(await page.locator('#chart-latency g[data-series=p50] circle').count()).toBeGreaterThan(0);
    expect(await page.locator('#chart-latency g[data-series=p99] circle').count()).toBeGreaterThan(0);

    // What waits now: the order with an unknown result, the projections' lag, the backlog of callbacks.
    expect(await page.locator('#queue-size').innerText()).toBe(String(MIX.unknown));
    expect(await page.locator('#queues a[href^="#/order/"]').count()).toBe(1);
    expect(await page.locator('#chart-lag svg [data-bar]').count()).toBe(reply.now.projections.length);
    expect(await page.locator('#callback-backlog').innerText()).toMatch(/^Backlog now: \d+ pending, \d+ gave up/);

    // The charts, their legends and tables pass axe-core with nothing serious, the figures opened as with nothing.
    await page.click('#chart-orders details summary');
    await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
    expect(violations).toEqual([]);

    // The low-balance list: the merchant under its threshold, with a link to it.
    const listed = page.locator('#low-balance tbody tr');
    expect(await listed.count()).toBe(1);
    const balance = await adminClient(service.url)('GET', `/admin/v1/wallets/${merchant.merchantId}/balance`);
    expect(await listed.innerText()).toBe(`Acme Games\t${(balance.body as { data: { available_balance: string } }).data.available_balance} USD\t500.00 USD`);
    await page.click('#low-balance a >> text=Acme Games');
    await page.waitForSelector('#merchant-settings');
    expect(page.url()).toContain(`#/merchant/${merchant.merchantId}`);
  });

  it('the window switch draws the last 24 hours from its own request, and back', async () => {
    const page = await signIn(TEST_ENV.ADMIN_TOKEN);
    await page.waitForSelector('#chart-orders svg.dash-svg');
    expect(await page.locator('.dash-window a[aria-current=true]').innerText()).toBe('Last hour');
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/admin/v1/operations/dashboard?window=24h')),
      page.click('.dash-window >> text=Last 24 hours'),
    ]);
    expect(request.method()).toBe('GET');
    await page.waitForSelector('#dashboard-window >> text=The last 24 hours');
    expect(page.url()).toMatch(/#\/dashboard\?window=24h$/);
    expect(await page.locator('.dash-window a[aria-current=true]').innerText()).toBe('Last 24 hours');
    expect(await drawn(page, '#chart-orders')).toEqual({ accepted: ACCEPTED, success: MIX.success, failed: MIX.failed, unknown: MIX.unknown });
    // 96 slots of 15 minutes: every slot with orders is a row, named by its start.
    const rows = await figures(page, '#chart-orders');
    expect(rows.every(([slot]) => /:(00|15|30|45)$/.test(slot))).toBe(true);
    expect(await page.locator('#chart-orders-title').innerText()).toBe('Orders per 15 minutes by outcome');

    await page.click('.dash-window >> text=Last hour');
    await page.waitForSelector('#dashboard-window >> text=The last hour');
    expect(await page.locator('#chart-orders-title').innerText()).toBe('Orders per minute by outcome');
  });

  it('a clerk lands on the queue, is not shown the dashboard, and the service refuses it to them', async () => {
    const page = await signIn(clerk.token);
    await page.waitForSelector('main table, main p.muted');
    expect(page.url()).toMatch(/#\/queue$/);
    expect(await page.locator('header nav a').allInnerTexts()).not.toContain('Dashboard');
    await page.goto(`${service.url}/console#/dashboard`);
    await page.waitForSelector('main .error');
    expect(await page.locator('main .error').innerText()).toContain('FORBIDDEN');
    expect(await page.locator('main svg').count()).toBe(0);
  });

  it("an operator sets and clears a merchant's low-balance threshold on the merchant's page", async () => {
    const admin = adminClient(service.url);
    const thresholdNow = async () => (await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.data.low_balance_threshold;
    const page = await signIn(TEST_ENV.ADMIN_TOKEN);
    await page.goto(`${service.url}/console#/merchant/${merchant.merchantId}`);
    const field = page.locator('#merchant-settings input[name=low_balance_threshold]');
    await field.waitFor();
    expect(await field.inputValue()).toBe('500.00');
    await field.fill('750.00');
    await page.click('#merchant-settings button[type=submit]');
    await page.waitForSelector('main dl >> text=750.00');
    expect(await thresholdNow()).toBe('750.00');
    await page.locator('#merchant-settings input[name=low_balance_threshold]').fill('');
    await page.click('#merchant-settings button[type=submit]');
    await page.waitForSelector('main dl >> text=none');
    expect(await thresholdNow()).toBeNull();
  });
});
