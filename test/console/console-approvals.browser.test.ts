import { Page } from 'playwright-core';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { consoleBrowser, inBrowser, until } from './console-browser';

const describeInBrowser = inBrowser('Console approvals browser tests');

type Staff = { staff_id: string; token: string };

/**
 * The four-eyes rule as staff meet it in the console, with
 * APPROVAL_THRESHOLD=1.00: an order of 1.20, a deposit of 5.00 and an
 * adjustment of 1.20 each wait for a second person; 0.50 does not. Two
 * people, two browsers (contexts), as on two machines; the money is checked
 * to the cent through the API.
 */
describeInBrowser('four-eyes approvals and wallet adjustments in the console', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let rita: Staff;
  let rob: Staff;
  let ada: Staff;
  let seq = 0;

  const { signIn, go } = consoleBrowser(() => service.url);

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url, APPROVAL_THRESHOLD: '1.00' });
    merchant = await provisionMerchant(service);
    await service.pool.query(`update merchants set name = 'Acme Games' where merchant_id = $1`, [merchant.merchantId]);
    admin = adminClient(service.url);
    rita = await admin.createStaff('reconciler', 'Rita Reconciler');
    rob = await admin.createStaff('reconciler', 'Rob Reconciler');
    ada = await admin.createStaff('admin', 'Ada Admin');
  });

  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  const text = (page: Page, selector: string) => page.locator(selector).innerText();
  const stage = async (orderNo: string) => (await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo])).rows[0]?.stage;
  /** The wallet in minor units, from the ledger itself (the balance route reads the wallet's stream). */
  const wallet = async () => {
    const w = (await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/balance`)).body.data;
    const cents = (amount: string) => Math.round(Number(amount) * 100);
    return { balance: cents(w.balance), frozen: cents(w.frozen_balance), available: cents(w.available_balance) };
  };
  /** A request's card in the inbox, by what its summary says. */
  const card = (page: Page, summary: string) => page.locator('article.approval', { has: page.locator(`h2:has-text("${summary}")`) });

  async function submit(accountId: string): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `FOUR-EYES-${++seq}`, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '7' } }),
    });
    expect(reply.status).toBe(202);
    return reply.body.data.order_no as string;
  }

  /** An order whose upstream result is unknown: the simulator takes account ids ending 999 and never answers. */
  async function unknownResultOrder(): Promise<string> {
    const orderNo = await submit(`7${++seq}000999`);
    await until(`${orderNo} to reach the queue`, async () => (await stage(orderNo)) === 'unknown');
    return orderNo;
  }

  it('a clerk’s resolution waits for a second person: no approve button for its requester, another clerk approves, and the money moves', async () => {
    const orderNo = await unknownResultOrder();
    const before = await wallet();
    const asRita = await signIn(rita.token);
    await go(asRita, `order/${orderNo}`, '#resolve-form');
    await asRita.selectOption('#resolve-form select[name=outcome]', 'success');
    await asRita.fill('#resolve-form textarea[name=note]', 'Provider portal shows it delivered');
    await asRita.click('#resolve-form button[type=submit]');
    await asRita.waitForSelector('#confirm-resolve');
    expect(await text(asRita, '.confirm')).toContain('a second person approves first');
    await asRita.click('#confirm-resolve');

    // 202 APPROVAL_REQUIRED: neither done nor an error. The order still waits and nothing moved.
    await asRita.waitForSelector('#resolve .notice.waiting');
    const notice = await text(asRita, '#resolve .notice.waiting');
    expect(notice).toContain('Waiting for a second person’s approval.');
    expect(notice).toContain(`Resolve order ${orderNo} as success: nothing has moved yet.`);
    expect(await asRita.locator('#resolve .error').count()).toBe(0);
    expect(await stage(orderNo)).toBe('unknown');
    expect(await wallet()).toEqual(before);
    // The navigation counts it.
    await until('the count of waiting requests', async () => (await text(asRita, 'header nav a[href="#/approvals"]')).includes('1'));

    // The notice links to the request: its requester may withdraw it, not approve it, and is told why.
    await asRita.click('#resolve .notice.waiting a');
    await asRita.waitForSelector('article.approval');
    expect(await asRita.locator('article.approval button[data-decision=approve]').count()).toBe(0);
    expect(await text(asRita, 'article.approval .notice.own')).toContain('You asked for this, so you may not approve it');
    expect(await asRita.locator('article.approval button[data-decision=reject]').innerText()).toContain('Withdraw');
    // And a page drawn again still shows no approve button for her.
    await asRita.reload();
    await asRita.waitForSelector('article.approval');
    expect(await asRita.locator('article.approval button[data-decision=approve]').count()).toBe(0);

    // Another clerk finds it in the inbox, waiting first, with what it moves and who asked.
    const asRob = await signIn(rob.token);
    await asRob.click('header nav a[href="#/approvals"]');
    await asRob.waitForSelector('article.approval');
    const request = card(asRob, `Resolve order ${orderNo} as success`);
    expect(await asRob.locator('article.approval').first().getAttribute('class')).toContain('pending');
    const shown = await request.innerText();
    expect(shown).toContain('Acme Games');
    expect(shown).toContain('1.20 USD');
    expect(shown).toContain('Rita Reconciler');
    expect(shown).toContain('Provider portal shows it delivered');
    expect(shown).toContain(`Order ${orderNo} succeeds: the 1.20 USD frozen for it is deducted from the wallet of Acme Games.`);

    // The note is required; the confirmation says what moves; nothing moves before it.
    await request.locator('button[data-decision=approve]').click();
    expect(await request.locator('.confirm').count()).toBe(0);
    await request.locator('textarea[name=note]').fill('Matches the provider’s statement');
    await request.locator('button[data-decision=approve]').click();
    await request.locator('.confirm').waitFor();
    expect(await request.locator('.confirm').innerText()).toContain(`Approve: Resolve order ${orderNo} as success?`);
    expect(await stage(orderNo)).toBe('unknown');
    await request.locator('.confirm button.danger').click();

    // Decided: the card says who decided, why, and what came of it; the money moved, to the cent.
    await asRob.waitForSelector('article.approval.approved');
    const decided = await text(asRob, 'article.approval.approved');
    expect(decided).toContain('Approved by');
    expect(decided).toContain('Rob Reconciler');
    expect(decided).toContain('Matches the provider’s statement');
    expect(decided).toContain('Carried out');
    await until(`${orderNo} to succeed`, async () => (await stage(orderNo)) === 'succeeded');
    const after = await wallet();
    expect(after).toEqual({ balance: before.balance - 120, frozen: before.frozen - 120, available: before.available });

    // The order names both people.
    await go(asRita, `order/${orderNo}`, '#resolution');
    const resolution = await text(asRita, '#resolution');
    expect(resolution).toContain('Rita Reconciler');
    expect(resolution).toMatch(/Approved by\s+Rob Reconciler/);
    expect(await text(asRita, 'main table')).toContain(
      `Resolved as success by Rita Reconciler: Provider portal shows it delivered (approved by Rob Reconciler)`,
    );
  });

  it('a deposit over the threshold waits for another administrator, who rejects one and approves another', async () => {
    const before = await wallet();
    const asAdmin = await signIn(TEST_ENV.ADMIN_TOKEN);
    await go(asAdmin, `merchant/${merchant.merchantId}`, '#deposit');
    const deposit = async (amount: string, reference: string) => {
      await asAdmin.fill('#deposit input[name=amount]', amount);
      await asAdmin.fill('#deposit input[name=reference]', reference);
      await asAdmin.fill('#deposit input[name=note]', `wire ${reference}`);
      await asAdmin.click('#deposit button[type=submit]');
      await asAdmin.waitForSelector(`#deposit + div .notice.waiting:has-text("${reference}")`);
      expect(await text(asAdmin, '#deposit + div')).toContain(`Deposit ${amount} USD, reference ${reference}: nothing has moved yet.`);
      expect(await text(asAdmin, '#deposit + div')).toContain('Another administrator must approve it');
    };
    await deposit('5.00', 'bank-four-eyes-1');
    await deposit('7.50', 'bank-four-eyes-2');
    expect(await wallet()).toEqual(before);

    const asAda = await signIn(ada.token);
    await go(asAda, 'approvals?status=pending&kind=deposit', 'article.approval');
    expect(await asAda.locator('article.approval').count()).toBe(2);
    const rejected = card(asAda, 'Deposit 7.50 USD, reference bank-four-eyes-2');
    await rejected.locator('textarea[name=note]').fill('No such transfer on the statement');
    await rejected.locator('button[data-decision=reject]').click();
    expect(await rejected.locator('.confirm').innerText()).toContain('Nothing moves');
    await rejected.locator('.confirm button:has-text("Confirm")').click();
    await asAda.waitForSelector('article.approval.rejected');
    expect(await text(asAda, 'article.approval.rejected')).toContain('Rejected: nothing moved.');

    const approved = card(asAda, 'Deposit 5.00 USD, reference bank-four-eyes-1');
    await approved.locator('textarea[name=note]').fill('On the statement of today');
    await approved.locator('button[data-decision=approve]').click();
    expect(await approved.locator('.confirm').innerText()).toContain('5.00 USD will be credited to the wallet of Acme Games.');
    await approved.locator('.confirm button.danger').click();
    await asAda.waitForSelector('article.approval.approved');
    expect(await text(asAda, 'article.approval.approved')).toContain('Ada Admin');
    expect(await wallet()).toEqual({ ...before, balance: before.balance + 500, available: before.available + 500 });

    // Decided ones show under "approved" and "rejected", with the decider's name and note, to an auditor too.
    const aldo = await admin.createStaff('auditor', 'Aldo Auditor');
    const asAldo = await signIn(aldo.token);
    await go(asAldo, 'approvals?kind=deposit', 'article.approval');
    const all = await text(asAldo, '#approvals');
    expect(all).toContain('No such transfer on the statement');
    expect(all).toContain('On the statement of today');
    expect(await asAldo.locator('article.approval button').count()).toBe(0);
  });

  it('an adjustment through the form: a clerk corrects a final order, an administrator approves; a small one on the merchant page moves at once', async () => {
    const orderNo = await submit(`8${++seq}000042`);
    await until(`${orderNo} to succeed`, async () => (await stage(orderNo)) === 'succeeded');
    const before = await wallet();

    const asRita = await signIn(rita.token);
    await go(asRita, `order/${orderNo}`, '#adjustments');
    expect(await text(asRita, '#adjustments')).toContain('No adjustment');
    await asRita.click('#correct-order summary');
    // Prefilled from the order: its amount and a reference naming it.
    expect(await asRita.inputValue('#adjust-wallet input[name=amount]')).toBe('1.20');
    expect(await asRita.inputValue('#adjust-wallet input[name=reference]')).toBe(`adj-${orderNo}`);
    await asRita.selectOption('#adjust-wallet select[name=direction]', 'credit');
    await asRita.fill('#adjust-wallet input[name=reason]', 'UPSTREAM_REPORT_FAILED');
    await asRita.fill('#adjust-wallet textarea[name=note]', 'The provider’s report of today lists it as failed');
    await asRita.click('#adjust-wallet button[type=submit]');
    await asRita.waitForSelector('#confirm-adjustment');
    const confirmation = await text(asRita, '#adjustments .confirm');
    expect(confirmation).toContain('Credit 1.20 USD to Acme Games?');
    expect(confirmation).toContain(`The wallet’s balance and available balance go up by 1.20 USD`);
    expect(confirmation).toContain(`correcting order ${orderNo}. The order stays success`);
    await asRita.click('#confirm-adjustment');
    await asRita.waitForSelector('#adjustments .notice.waiting');
    expect(await text(asRita, '#adjustments .notice.waiting')).toContain('An administrator other than you must approve it');
    expect(await wallet()).toEqual(before);

    // A clerk may not approve an adjustment: another clerk sees it, and who may.
    const asRob = await signIn(rob.token);
    await go(asRob, 'approvals?kind=adjustment&status=pending', 'article.approval');
    expect(await asRob.locator('article.approval button[data-decision=approve]').count()).toBe(0);
    expect(await text(asRob, 'article.approval')).toContain('Waiting for an administrator to decide it');

    const asAda = await signIn(ada.token);
    await go(asAda, 'approvals?kind=adjustment&status=pending', 'article.approval');
    const request = card(asAda, `Credit 1.20 USD for UPSTREAM_REPORT_FAILED on order ${orderNo}`);
    await request.locator('textarea[name=note]').fill('Report line checked');
    await request.locator('button[data-decision=approve]').click();
    await request.locator('.confirm button.danger').click();
    await asAda.waitForSelector('article.approval.approved');
    expect(await wallet()).toEqual({ ...before, balance: before.balance + 120, available: before.available + 120 });

    // The order's page lists it, by name: who asked and who approved.
    await until('the adjustment on the order’s page', async () => {
      await asRita.reload();
      await asRita.waitForSelector('#adjustments-list');
      return (await text(asRita, '#adjustments-list')).includes('UPSTREAM_REPORT_FAILED');
    });
    const listed = await text(asRita, '#adjustments-list');
    expect(listed).toContain('Rita Reconciler');
    expect(listed).toContain('Ada Admin');
    expect(listed).toContain('1.20 USD');

    // Under the threshold an adjustment moves at once: the merchant page's wallet and the order's list follow.
    await go(asAda, `merchant/${merchant.merchantId}`, '#adjust-wallet');
    await asAda.selectOption('#adjust-wallet select[name=direction]', 'debit');
    await asAda.fill('#adjust-wallet input[name=amount]', '0.50');
    await asAda.fill('#adjust-wallet input[name=reason]', 'AMOUNT_MISMATCH');
    await asAda.fill('#adjust-wallet input[name=reference]', `adj-${orderNo}-amount`);
    await asAda.fill('#adjust-wallet input[name=order_no]', orderNo);
    await asAda.fill('#adjust-wallet textarea[name=note]', 'The provider charged 0.50 more');
    await asAda.click('#adjust-wallet button[type=submit]');
    const available = (before.available + 120) / 100;
    expect(await text(asAda, '#adjustment .confirm')).toContain(`(available now ${available.toFixed(2)}, then ${(available - 0.5).toFixed(2)} USD)`);
    await asAda.click('#confirm-adjustment');
    await asAda.waitForSelector('#adjusted');
    expect(await text(asAda, '#adjusted')).toContain('Debited 0.50 USD from Acme Games.');
    expect(await text(asAda, '#merchant-wallet')).toContain(`available ${(available - 0.5).toFixed(2)}`);
    expect(await wallet()).toEqual({ ...before, balance: before.balance + 70, available: before.available + 70 });
  });
});
