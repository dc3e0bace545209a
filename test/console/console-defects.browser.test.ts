import { Browser, BrowserContext, BrowserContextOptions, chromium, Page } from 'playwright-core';
import { allProjections } from '../../projections/all-projections';
import type { OrderDetailView } from '../../src/back-office/replies.public';
import { AdjustWallet } from '../../src/ledger/commands/adjust-wallet/adjust-wallet.command';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findChromium } = require('../support/chromium') as { findChromium(): { path?: string; reason?: string } };

const CHROMIUM = findChromium();
const inBrowser = CHROMIUM.path ? describe : describe.skip;

/**
 * The defects staff found when they used the console as each role would,
 * each with the test that failed while it was there. Same set-up as
 * console.browser.test.ts: Debian's Chromium, headless, against the real
 * service on a real database.
 */
inBrowser('the defects staff found in the console', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let browser: Browser;
  let merchant: TestMerchant;
  let clerk: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  let admin: ReturnType<typeof adminClient>;
  let seq = 0;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV, UPSTREAM_URL: simulator.url, UPSTREAM_TIMEOUT_MS: '200' });
    merchant = await provisionMerchant(service);
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    admin = adminClient(service.url);
    clerk = await admin.createStaff('reconciler', 'Rita Reconciler');
    auditor = await admin.createStaff('auditor', 'Aldo Auditor');
    browser = await chromium.launch({ executablePath: CHROMIUM.path, headless: true, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  /** A browser of its own; `problems` collects every console message, uncaught error and failed or refused request of its pages. */
  async function newBrowser(options: BrowserContextOptions = {}): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    contexts.push(context);
    const problems: string[] = [];
    const page = await context.newPage();
    // Every message the page logs; Chromium's own hints about the markup ("[DOM] ...", level verbose) are the accessibility checks' to judge.
    page.on('console', (message) => (message.type() as string) !== 'verbose' && problems.push(`console ${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => problems.push(`error: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => response.status() >= 400 && problems.push(`${response.status()}: ${response.url()}`));
    page.on('dialog', (dialog) => dialog.accept());
    return { page, problems };
  }

  async function signIn(token: string, options: BrowserContextOptions = {}) {
    const opened = await newBrowser(options);
    await opened.page.goto(`${service.url}/console`);
    await opened.page.fill('input[name=token]', token);
    await opened.page.click('button[type=submit]');
    await opened.page.waitForSelector('#sign-out');
    return opened;
  }

  async function go(page: Page, hash: string, selector: string) {
    await page.goto(`${service.url}/console#/${hash}`);
    await page.waitForSelector(selector);
  }

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const stage = async (orderNo: string) => (await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo])).rows[0]?.stage;
  const text = (page: Page, selector: string) => page.locator(selector).innerText();
  /** The value beside a label in a list of facts. */
  const fact = (page: Page, label: string, within = 'main') => text(page, `${within} dl.facts dt:text-is("${label}") + dd`);

  /** An order whose upstream result is unknown: the simulator takes account ids ending 999 and never answers. */
  async function unknownResultOrder(): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `DEFECT-${++seq}`, sku_id: 'mlbb-86', account_id: `5${seq}000999`, account_fields: { server_id: '7' } }),
    });
    expect(reply.status).toBe(202);
    const orderNo = reply.body.data.order_no as string;
    await until(`${orderNo} to reach the queue`, async () => (await stage(orderNo)) === 'unknown');
    return orderNo;
  }

  /** Resolved through the API with the clerk's token, then carried to its final stage. */
  async function resolvedOrder(outcome: 'success' | 'failed', note: string): Promise<string> {
    const orderNo = await unknownResultOrder();
    const reply = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome, note }, { token: clerk.token });
    expect(reply.status).toBe(200);
    const final = outcome === 'success' ? 'succeeded' : 'failed';
    await until(`${orderNo} to be ${final}`, async () => (await stage(orderNo)) === final);
    return orderNo;
  }

  it('list pages print no `null` under the table when there is no next page', async () => {
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    for (const [hash, selector] of [
      ['merchants', 'main table'],
      ['orders', 'main h2'],
      ['staff', 'main table'],
      ['catalogue', '#put-sku'],
      ['queue', 'main p.muted'],
    ]) {
      await go(page, hash, selector);
      const shown = await text(page, 'main');
      expect({ hash, null: /\bnull\b/.test(shown), next: shown.includes('Next') }).toEqual({ hash, null: false, next: false });
    }
  });

  it('after a deposit the merchant page shows one balance, the new one', async () => {
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, `merchant/${merchant.merchantId}`, '#deposit');
    const before = await fact(page, 'Wallet');
    await page.fill('#deposit input[name=amount]', '5.00');
    await page.fill('#deposit input[name=reference]', 'defect-deposit-1');
    await page.click('#deposit button[type=submit]');
    await page.waitForSelector('#deposit + div .ok');
    const deposited = (await text(page, '#deposit + div .ok')).match(/Balance (\d+\.\d\d) USD, available (\d+\.\d\d)/);
    expect(deposited).not.toBeNull();
    const [, balance, available] = deposited!;
    expect(await fact(page, 'Wallet')).toMatch(new RegExp(`^${balance} USD \\(frozen \\d+\\.\\d\\d, available ${available}\\)$`));
    expect(await fact(page, 'Wallet')).not.toBe(before);
  });

  it('instants are typed and shown in UTC to the second, whatever the browser’s time zone', async () => {
    // Half an hour off the hour, so that neither the hours nor the minutes could be right by chance.
    const { page } = await signIn(auditor.token, { timezoneId: 'Asia/Kolkata' });
    const statement = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?limit=1000`);
    const lines = statement.body.data.lines as { recorded_at: string; balance_after: string }[];
    // A second after the last deposit was recorded: the balance then is that of the last line recorded by that instant.
    const at = new Date(Math.floor(Date.parse(lines[lines.length - 1].recorded_at) / 1000) * 1000 + 1000).toISOString().replace('.000Z', 'Z');
    const expected = lines.filter((l) => Date.parse(l.recorded_at) <= Date.parse(at)).at(-1)!.balance_after;

    await go(page, `statement?merchant_id=${merchant.merchantId}`, '#balance-form');
    expect(await text(page, '#balance-form label')).toContain('UTC');
    await page.fill('#balance-form input[name=at]', at);
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().includes('/balance?')), page.click('#balance-form button[type=submit]')]);
    expect(new URL(request.url()).searchParams.get('at')).toBe(at);
    await page.waitForSelector('#balance-form + div dl');
    expect(await fact(page, 'As of', '#balance-form + div')).toBe(`${at.replace('T', ' ').replace('Z', '')} UTC`);
    expect(await fact(page, 'Balance', '#balance-form + div')).toBe(expected);

    // The statement's window and the order search take the same instants, and show them as they were typed.
    await page.fill('#statement-form input[name=from]', '2026-01-02 03:04:05');
    await page.click('#statement-form button[type=submit]');
    await page.waitForSelector('text=Window: 2026-01-02 03:04:05 UTC to now');
    expect(await page.inputValue('#statement-form input[name=from]')).toBe('2026-01-02T03:04:05Z');
    await go(page, 'orders', '#order-search');
    await page.fill('#order-search input[name=created_from]', '2026-01-02T03:04:05+05:30');
    await page.click('#order-search button[type=submit]');
    await page.waitForURL(/created_from=2026-01-01T21%3A34%3A05Z/);
    await page.waitForSelector('main h2');
    expect(await page.inputValue('#order-search input[name=created_from]')).toBe('2026-01-01T21:34:05Z');
    // What is no instant is refused on the page, before any request.
    await page.fill('#order-search input[name=created_from]', '2026-02-30T10:00:00Z');
    await page.click('#order-search button[type=submit]');
    expect(await page.locator('#order-search input[name=created_from]:invalid').count()).toBe(1);
    expect(page.url()).toContain('created_from=2026-01-01T21%3A34%3A05Z');
  });

  it('the rebuild page offers exactly the read models the API rebuilds, and "all" rebuilds all of them', async () => {
    const rebuildable = allProjections.map((p) => p.name);
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, 'rebuild', '#start-rebuild');
    const offered = await page.locator('#start-rebuild select[name=projection] option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));
    // In the status page's order; which ones is the point.
    expect(offered[0]).toBe('');
    expect(offered.slice(1).sort()).toEqual([...rebuildable].sort());
    expect((await admin('POST', '/admin/v1/projections/rebuild', { projection: 'callback-schedule' })).status).toBe(422);
    await page.selectOption('#start-rebuild select[name=projection]', '');
    await page.click('#start-rebuild button[type=submit]');
    await page.waitForSelector('#rebuild-progress .pill.done', { timeout: 30_000 });
    const rebuilt = await page.locator('#rebuild-progress tbody tr td:first-child').allInnerTexts();
    expect(rebuilt).toEqual(rebuildable);
  });

  it('the outcome of a resolution has no default: the form refuses to go on until one is chosen', async () => {
    const orderNo = await unknownResultOrder();
    const { page } = await signIn(clerk.token);
    await go(page, `order/${orderNo}`, '#resolve-form');
    expect(await page.inputValue('#resolve-form select[name=outcome]')).toBe('');
    await page.fill('#resolve-form textarea[name=note]', 'Provider says pending still');
    await page.click('#resolve-form button[type=submit]');
    expect(await page.locator('#resolve-form select[name=outcome]:invalid').count()).toBe(1);
    expect(await page.locator('#confirm-resolve').count()).toBe(0);
    await page.selectOption('#resolve-form select[name=outcome]', 'failed');
    await page.click('#resolve-form button[type=submit]');
    await page.waitForSelector('#confirm-resolve');
    expect(await text(page, '.confirm')).toContain('will be released to merchant Acme Games');
    expect(await stage(orderNo)).toBe('unknown');
  });

  it('staff are shown by name, to every role, and the replies keep their ids beside the names', async () => {
    const orderNo = await resolvedOrder('success', 'Provider statement line 7 shows it delivered');
    for (const token of [clerk.token, auditor.token]) {
      const { page } = await signIn(token);
      await go(page, `order/${orderNo}`, '#resolution');
      expect(await fact(page, 'Resolved by', '#resolution')).toBe(`Rita Reconciler (${clerk.staff_id})`);
      expect(await text(page, 'main table')).toContain('Resolved as success by Rita Reconciler: Provider statement line 7 shows it delivered');
      // The id is said once, beside the name, where an investigation needs it; nowhere alone.
      expect(await text(page, 'main')).not.toMatch(new RegExp(`${clerk.staff_id}(?!\\))`));
      const detail = await page.evaluate(
        async (path) => ((await (await fetch(path, { headers: { 'x-console': '1' } })).json()) as { data: OrderDetailView }).data,
        `/admin/v1/orders/${orderNo}`,
      );
      expect(detail.resolution).toMatchObject({ resolved_by: clerk.staff_id, resolved_by_name: 'Rita Reconciler' });
      expect(detail.history.find((e) => e.type === 'OrderResolved')).toMatchObject({ data: { resolved_by: clerk.staff_id }, staff_name: 'Rita Reconciler' });
    }
    const summary = await admin('GET', `/admin/v1/orders?order_no=${orderNo}`, undefined, { token: auditor.token });
    expect(summary.body.data.orders[0]).toMatchObject({ resolved_by: clerk.staff_id, resolved_by_name: 'Rita Reconciler' });

    // The operator's pages: who created a member, who last changed a merchant.
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, 'staff', 'main table');
    expect(await page.locator(`main tr:has-text("${clerk.staff_id}") td:nth-child(5)`).innerText()).toMatch(/ by Administrator \(ADMIN_TOKEN\)$/);
    await go(page, `merchant/${merchant.merchantId}`, '#merchant-settings');
    await page.fill('#merchant-settings input[name=rate_limit_per_second]', '9000');
    await page.click('#merchant-settings button[type=submit]');
    await page.waitForSelector('text=by Administrator (ADMIN_TOKEN)');
    expect(await fact(page, 'Updated')).toMatch(/ by Administrator \(ADMIN_TOKEN\)$/);
    expect((await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.data).toMatchObject({
      updated_by: 'admin',
      updated_by_name: 'Administrator (ADMIN_TOKEN)',
    });
  });

  it('merchants are shown by name on orders and queues, and the replies keep merchant_id', async () => {
    const orderNo = await unknownResultOrder();
    const { page } = await signIn(clerk.token);
    await go(page, 'queue', `main tbody tr:has-text("${orderNo}")`);
    // The queue's first column is the box that selects the row for a bulk re-query.
    expect(await page.locator(`main tbody tr:has-text("${orderNo}") td:nth-child(3)`).innerText()).toBe('Acme Games');
    await go(page, `orders?order_no=${orderNo}`, 'main tbody tr');
    expect(await page.locator('main tbody tr td:nth-child(3)').innerText()).toBe('Acme Games');
    await go(page, `order/${orderNo}`, '#resolve-form');
    expect(await fact(page, 'Merchant')).toBe(`Acme Games (${merchant.merchantId})`);
    const queue = await admin('GET', '/admin/v1/reconciliation/orders', undefined, { token: clerk.token });
    expect(queue.body.data.orders.find((o: { order_no: string }) => o.order_no === orderNo)).toMatchObject({
      merchant_id: merchant.merchantId,
      merchant_name: 'Acme Games',
    });
    const detail = await admin('GET', `/admin/v1/orders/${orderNo}`, undefined, { token: clerk.token });
    expect(detail.body.data).toMatchObject({ merchant_id: merchant.merchantId, merchant_name: 'Acme Games' });
  });

  it('the timeline says what happened in words and amounts, with each event one click away', async () => {
    const orderNo = await resolvedOrder('success', 'Seen on the provider portal');
    await service.commands.execute(
      new AdjustWallet(
        merchant.merchantId,
        { reference: 'adj-42', direction: 'credit', amount: 250n, reason: 'GOODWILL', note: 'Ticket 42, a late top-up' },
        'admin',
      ),
    );
    const { page } = await signIn(auditor.token);
    await go(page, `order/${orderNo}`, 'main table');
    const words = await page.locator('main table tbody tr td:nth-child(4) .event > span').allInnerTexts();
    expect(words).toEqual([
      expect.stringMatching(/^Placed: 1\.20 USD to 5\d+000999 \[server_id 7\] \(attempt 1\)$/),
      'Accepted (attempt 1)',
      'Sent upstream (attempt 1)',
      expect.stringMatching(/^Result unknown: /),
      'Resolved as success by Rita Reconciler: Seen on the provider portal',
      'Succeeded',
    ]);
    expect(await text(page, 'main table')).not.toContain('{');
    await page.click('main table tbody tr:first-child details summary');
    expect(await text(page, 'main table tbody tr:first-child details pre')).toContain('"type": "OrderPlaced"');

    await go(page, `statement?merchant_id=${merchant.merchantId}`, 'main table');
    const lines = await page.locator('main table tbody tr td:nth-child(3) .event > span').allInnerTexts();
    expect(lines).toEqual(expect.arrayContaining(['Opened, in USD', 'Deposited 100.00', 'Adjusted: credit of 2.50, GOODWILL: Ticket 42, a late top-up']));
    // The order's own lines: its number is in the line's column beside the words.
    const ofOrder = await page.locator(`main table tbody tr:has(a[href="#/order/${orderNo}"]) td:nth-child(3) .event > span`).allInnerTexts();
    expect(ofOrder).toEqual(['Frozen 1.20 (attempt 1)', 'Deducted 1.20 (RESOLVED_SUCCESS)']);
    await page.click('main table tbody tr:first-child details summary');
    expect(await text(page, 'main table tbody tr:first-child details')).toMatch(/^WalletOpened\s+\{/);
  });

  it('after creating a merchant the list shows it, and the form keeps its currency and rate limit', async () => {
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, 'merchants', '#create-merchant');
    await page.fill('#create-merchant input[name=name]', 'Contoso Credits');
    await page.click('#create-merchant button[type=submit]');
    await page.waitForSelector('#created .secret code.once');
    expect(await text(page, 'main table')).toContain('Contoso Credits');
    expect(await page.inputValue('#create-merchant input[name=currency]')).toBe('USD');
    expect(await page.inputValue('#create-merchant input[name=rate_limit_per_second]')).toBe('100');
    expect(await page.inputValue('#create-merchant input[name=name]')).toBe('');
  });

  it('no page logs an error or fails a request: sign-in, every role’s pages, orders final or not', async () => {
    const pending = await unknownResultOrder();
    const final = await resolvedOrder('failed', 'Provider refunded it');
    const problems: string[] = [];
    const seen = (where: string, found: string[]) => problems.push(...found.splice(0).map((p) => `${where}: ${p}`));

    // The sign-in page, in a browser that never signed in (the browser asks for the icon by itself).
    const fresh = await newBrowser();
    await fresh.page.goto(`${service.url}/console`);
    await fresh.page.waitForSelector('input[name=token]');
    await fresh.page.waitForLoadState('networkidle');
    seen('sign-in', fresh.problems);

    const visits: [token: string, hash: string, selector: string][] = [
      [clerk.token, 'queue', 'main table'],
      [clerk.token, 'approvals', '#approval-filter'],
      [clerk.token, 'requery', 'main table, main p.muted'],
      [clerk.token, 'reports', '#upload-report'],
      [clerk.token, 'orders', 'main table'],
      [clerk.token, `order/${pending}`, 'main h2:has-text("Callbacks") + p'],
      [clerk.token, `order/${final}`, 'main h2:has-text("Callbacks") + p'],
      [auditor.token, `statement?merchant_id=${merchant.merchantId}`, '#chain .ok, #chain .error'],
      [auditor.token, 'verify', '#verify-form'],
      [auditor.token, 'approvals', '#approval-filter'],
      [auditor.token, 'reports', 'main h2'],
      [auditor.token, `order/${final}`, 'main table'],
      [TEST_ENV.ADMIN_TOKEN, 'merchants', 'main table'],
      [TEST_ENV.ADMIN_TOKEN, 'approvals', '#approval-filter'],
      [TEST_ENV.ADMIN_TOKEN, `merchant/${merchant.merchantId}`, '#set-price'],
      [TEST_ENV.ADMIN_TOKEN, 'catalogue', '#put-sku'],
      [TEST_ENV.ADMIN_TOKEN, 'staff', 'main table'],
      [TEST_ENV.ADMIN_TOKEN, 'rebuild', '#start-rebuild'],
      [TEST_ENV.ADMIN_TOKEN, 'status', 'main table'],
    ];
    const signedIn = new Map<string, Awaited<ReturnType<typeof signIn>>>();
    for (const [token, hash, selector] of visits) {
      if (!signedIn.has(token)) signedIn.set(token, await signIn(token));
      const { page, problems: found } = signedIn.get(token)!;
      await go(page, hash, selector);
      await page.waitForLoadState('networkidle');
      seen(hash, found);
    }
    const { page: verify, problems: found } = signedIn.get(auditor.token)!;
    await go(verify, 'verify', '#verify-form');
    await verify.click('#verify-form button[type=submit]');
    await verify.waitForSelector('#verification .ok, #verification .bad');
    seen('verification', found);
    // Chromium asks for /favicon.ico on its own, outside the page's requests: asked here the same way.
    const icon = await fresh.page.request.get(`${service.url}/favicon.ico`);
    expect({ problems, icon: [icon.status(), icon.headers()['content-type']] }).toEqual({ problems: [], icon: [200, 'image/x-icon'] });
  });

  it('the statement names the command to check it without literal backticks', async () => {
    const { page } = await signIn(auditor.token);
    await go(page, `statement?merchant_id=${merchant.merchantId}`, '#download-csv');
    expect(await text(page, 'main')).not.toContain('`');
    expect(await text(page, 'main code')).toBe('npm run verify-statement');
  });

  it('an intact hash chain is said in a green box, not in an amber warning', async () => {
    const { page } = await signIn(auditor.token);
    await go(page, `statement?merchant_id=${merchant.merchantId}`, '#chain .ok');
    expect(await page.locator('#chain .notice').count()).toBe(0);
    const box = await page.locator('#chain .ok').evaluate((ok) => {
      const style = ok.ownerDocument.defaultView!.getComputedStyle(ok.parentElement!);
      return { className: ok.parentElement!.className, background: style.backgroundColor };
    });
    expect(box.className).toBe('passed');
    // Green dominates the box's background.
    const [red, green, blue] = box.background.match(/\d+/g)!.map(Number);
    expect(green).toBeGreaterThan(red);
    expect(green).toBeGreaterThan(blue);
  });

  it('a final order’s status and stage are said once: `failed`, not `failed failed`', async () => {
    const failed = await resolvedOrder('failed', 'Provider refunded it');
    const succeeded = await resolvedOrder('success', 'Provider delivered it');
    const pending = await unknownResultOrder();
    const { page } = await signIn(auditor.token);
    for (const [orderNo, status] of [
      [failed, 'failed'],
      [succeeded, 'success'],
      [pending, 'processing unknown'],
    ]) {
      await go(page, `order/${orderNo}`, 'main dl.facts');
      expect({ orderNo, status: await fact(page, 'Status') }).toEqual({ orderNo, status });
    }
  });

  it('at 1280 px the administrator’s navigation fits on one line', async () => {
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(page, 'status', 'main table');
    // With the widest count of waiting approvals the badge beside Approvals would show.
    await page.locator('#pending-count').evaluate((count) => {
      count.textContent = '999';
      count.classList.add('some');
    });
    const tops = await page.locator('header nav a').evaluateAll((links) => links.map((a) => Math.round(a.getBoundingClientRect().top)));
    expect(tops).toHaveLength(11);
    expect(new Set(tops).size).toBe(1);
  });

  it('amounts stay on one line inside their cells, however narrow the window', async () => {
    const { page } = await signIn(TEST_ENV.ADMIN_TOKEN, { viewport: { width: 560, height: 900 } });
    for (const [hash, selector] of [
      ['orders', 'main table td.num'],
      ['queue', 'main table td.num'],
      [`statement?merchant_id=${merchant.merchantId}`, 'main table td.num'],
    ]) {
      await go(page, hash, selector);
      const broken = await page.locator('main table td.num').evaluateAll((cells) =>
        cells
          .filter((cell) => {
            const range = cell.ownerDocument.createRange();
            range.selectNodeContents(cell);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
          })
          .map((cell) => cell.textContent),
      );
      expect({ hash, broken }).toEqual({ hash, broken: [] });
    }
  });
});
