import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { awaitFinal, FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { adminClient, failure, Reply } from './admin-client';

describe('back office: lists with filters and cursors, order search, staff lifecycle, status', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;
  let merchant: TestMerchant;
  let reconciler: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url });
    admin = adminClient(service.url);
    merchant = await provisionMerchant(service);
    reconciler = await admin.createStaff('reconciler', 'Rita');
    auditor = await admin.createStaff('auditor', 'Aldo');
  });
  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  const as = (staff: { token: string }) => ({ token: staff.token });

  async function submit(accountId: string, outTradeNo = `S-${++seq}`): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '9' } }),
    });
    expect(reply.status).toBe(202);
    return reply.body.data.order_no as string;
  }

  async function stageOf(orderNo: string, stage: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo]);
      if (rows[0]?.stage === stage) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${orderNo} never reached stage ${stage}`);
  }

  /** Walks a list from its first page to its last, `limit` rows at a time. */
  async function walk(path: string, key: string, limit: number) {
    const seen: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const reply: Reply = await admin('GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, undefined);
      expect(reply.status).toBe(200);
      expect(reply.body.data[key].length).toBeLessThanOrEqual(limit);
      seen.push(...reply.body.data[key]);
      cursor = reply.body.data.next_cursor;
    } while (cursor);
    return seen;
  }

  describe('merchants', () => {
    it('lists newest first, filters by name (any case, any part) and status, and pages with a cursor without gaps or repeats', async () => {
      const made = [];
      for (const name of ['Zeta Games', 'Alpha Toys', 'zeta mobile', 'Beta 100%_off']) made.push(await admin.createMerchant({ name }));
      await admin('PATCH', `/admin/v1/merchants/${made[1].merchant_id}`, { status: 'suspended' });

      const all = await walk('/admin/v1/merchants', 'merchants', 2);
      const ids = all.map((m) => m.merchant_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.slice(0, 4)).toEqual(made.map((m) => m.merchant_id).reverse());
      expect(ids).toContain(merchant.merchantId);
      expect(all[0]).toMatchObject({ name: 'Beta 100%_off', status: 'active', api_key: made[3].api_key });
      expect(all[0]).not.toHaveProperty('app_secret');

      const zeta = await admin('GET', '/admin/v1/merchants?name=ZETA');
      expect(zeta.body.data.merchants.map((m: { name: string }) => m.name)).toEqual(['zeta mobile', 'Zeta Games']);
      // % and _ are matched as themselves, not as wildcards.
      expect((await admin('GET', '/admin/v1/merchants?name=0%25_')).body.data.merchants.map((m: { name: string }) => m.name)).toEqual(['Beta 100%_off']);
      const suspended = await admin('GET', '/admin/v1/merchants?status=suspended');
      expect(suspended.body.data).toEqual({ merchants: [expect.objectContaining({ merchant_id: made[1].merchant_id })], next_cursor: null });
    });

    it('lets every role read merchants, and only admins change them', async () => {
      expect((await admin('GET', '/admin/v1/merchants', undefined, as(auditor))).status).toBe(200);
      expect((await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`, undefined, as(reconciler))).status).toBe(200);
      expect((await admin('POST', '/admin/v1/merchants', { name: 'x' }, as(auditor))).body).toEqual(failure('FORBIDDEN'));
    });

    it.each([
      ['an unknown parameter', '?nmae=x', 'nmae'],
      ['a repeated parameter', '?status=active&status=suspended', 'status'],
      ['a bad status', '?status=gone', 'status'],
      ['a limit of 0', '?limit=0', 'limit'],
      ['a limit over 200', '?limit=201', 'limit'],
      ['a cursor that is not one', '?cursor=abc', 'cursor'],
      ['a name of 129 characters', `?name=${'x'.repeat(129)}`, 'name'],
    ])('refuses %s with 422 naming it', async (_what, query, field) => {
      expect((await admin('GET', `/admin/v1/merchants${query}`)).body).toEqual(failure('VALIDATION_FAILED', field));
    });
  });

  describe('catalogue', () => {
    it('lists products, SKUs (by product and shelf) and a merchant’s prices in id order, page by page', async () => {
      await admin('PUT', '/admin/v1/products/aaa', { name: 'Arena' });
      await admin('PUT', '/admin/v1/skus/aaa-1', {
        product_id: 'aaa',
        name: 'One',
        required_account_fields: [],
        supports_account_check: false,
        on_shelf: false,
      });
      expect((await walk('/admin/v1/products', 'products', 1)).map((p) => p.product_id)).toEqual(['aaa', 'mlbb']);
      expect((await walk('/admin/v1/skus', 'skus', 2)).map((s) => s.sku_id)).toEqual(['aaa-1', 'mlbb-86', 'plain-10']);
      expect((await admin('GET', '/admin/v1/skus?product_id=mlbb&on_shelf=true')).body.data.skus.map((s: { sku_id: string }) => s.sku_id)).toEqual([
        'mlbb-86',
        'plain-10',
      ]);
      expect((await admin('GET', '/admin/v1/skus?on_shelf=false')).body.data.skus).toEqual([
        { sku_id: 'aaa-1', product_id: 'aaa', name: 'One', required_account_fields: [], supports_account_check: false, on_shelf: false, route: 'default' },
      ]);
      const prices = await walk(`/admin/v1/merchants/${merchant.merchantId}/prices`, 'prices', 1);
      expect(prices).toEqual([
        {
          merchant_id: merchant.merchantId,
          sku_id: 'mlbb-86',
          price: '1.20',
          sku_name: '86 Diamonds',
          on_shelf: true,
          updated_at: expect.stringMatching(/\+00:00$/),
          updated_by: 'test',
          // The fixture's stamp names no one.
          updated_by_name: null,
        },
        expect.objectContaining({ sku_id: 'plain-10', price: '10.00' }),
      ]);
      expect((await admin('GET', '/admin/v1/merchants/mch_nobody/prices')).body).toEqual(failure('MERCHANT_NOT_FOUND'));
      expect((await admin('GET', '/admin/v1/skus?on_shelf=yes')).body).toEqual(failure('VALIDATION_FAILED', 'on_shelf'));
      expect((await admin('GET', '/admin/v1/products', undefined, as(auditor))).body).toEqual(failure('FORBIDDEN'));
    });
  });

  describe('orders', () => {
    let delivered: string;
    let unknown: string;
    let refusedOutTradeNo: string;

    beforeAll(async () => {
      delivered = await submit('12345678', 'TICKET-1');
      unknown = await submit('77777999', 'TICKET-2');
      await awaitFinal(service, merchant, delivered);
      await stageOf(unknown, 'unknown');
      refusedOutTradeNo = 'TICKET-3';
      // 402: more than the wallet holds; no order for the merchant, but a refused attempt for support.
      await service.pool.query(`update merchant_prices set price = 99999999 where merchant_id = $1 and sku_id = 'plain-10'`, [merchant.merchantId]);
      const refused = await signedFetch(service, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: refusedOutTradeNo, sku_id: 'plain-10', account_id: '5', account_fields: {} }),
      });
      expect(refused.status).toBe(402);
      await service.catchUp();
    });

    const search = async (query: string, token?: { token: string }) => admin('GET', `/admin/v1/orders?${query}`, undefined, token);
    const orderNos = (reply: { body: { data: { orders: { order_no: string }[] } } }) => reply.body.data.orders.map((o) => o.order_no);

    it('finds an order by out_trade_no, order_no or account_id, with amounts as two-decimal strings and snake_case keys', async () => {
      const reply = await search(`out_trade_no=TICKET-1`, as(reconciler));
      expect(reply.body.data).toEqual({
        orders: [
          {
            order_no: delivered,
            merchant_id: merchant.merchantId,
            merchant_name: 'Test merchant',
            out_trade_no: 'TICKET-1',
            status: 'success',
            stage: 'succeeded',
            sku_id: 'mlbb-86',
            account_id: '12345678',
            account_fields: { server_id: '9' },
            amount: '1.20',
            currency: 'USD',
            refusal_code: null,
            upstream_attempts: 1,
            fail_code: null,
            fail_reason: null,
            resolved_by: null,
            resolved_by_name: null,
            created_at: expect.stringMatching(/\+00:00$/),
            result_unknown_at: null,
            completed_at: expect.stringMatching(/\+00:00$/),
          },
        ],
        next_cursor: null,
      });
      expect(orderNos(await search(`order_no=${unknown}`, as(auditor)))).toEqual([unknown]);
      expect(orderNos(await search('account_id=77777999'))).toEqual([unknown]);
      expect(orderNos(await search(`merchant_id=${merchant.merchantId}&out_trade_no=TICKET-2`))).toEqual([unknown]);
      expect(orderNos(await search('merchant_id=mch_other&out_trade_no=TICKET-2'))).toEqual([]);
    });

    it('filters by the merchant’s status and by the internal stage, unknown result included, and lists refused submits', async () => {
      expect(orderNos(await search('stage=unknown'))).toEqual([unknown]);
      expect(orderNos(await search('status=processing'))).toEqual([unknown]);
      expect(orderNos(await search('status=success'))).toEqual([delivered]);
      const refused = await search(`out_trade_no=${refusedOutTradeNo}`);
      expect(refused.body.data.orders).toEqual([expect.objectContaining({ stage: 'refused', status: null, refusal_code: 'INSUFFICIENT_BALANCE' })]);
    });

    it('filters by created and completed time, and pages newest first', async () => {
      const { rows } = await service.pool.query('select created_at, completed_at from rm_orders where order_no = $1', [delivered]);
      const created = (rows[0].created_at as Date).toISOString();
      const completed = (rows[0].completed_at as Date).toISOString();
      const justAfter = new Date(new Date(created).getTime() + 1).toISOString();
      expect(orderNos(await search(`created_from=${created}&created_to=${justAfter}`))).toEqual([delivered]);
      expect(orderNos(await search(`completed_from=${completed}`))).toEqual([delivered]);
      expect(orderNos(await search(`completed_to=${completed}`))).toEqual([]);
      const all = await walk('/admin/v1/orders', 'orders', 1);
      expect(all.map((o) => o.order_no)).toHaveLength(3);
      expect(all.map((o) => o.created_at)).toEqual([...all.map((o) => o.created_at as string)].sort().reverse());
    });

    it.each([
      ['an unknown status', 'status=unknown', 'status'],
      ['an unknown stage', 'stage=lost', 'stage'],
      ['a time without an offset', 'created_from=2026-11-22T10:00:00', 'created_from'],
      ['a bad order number', 'order_no=a%20b', 'order_no'],
      ['a misspelt filter', 'outtradeno=X', 'outtradeno'],
    ])('refuses %s with 422', async (_what, query, field) => {
      expect((await search(query)).body).toEqual(failure('VALIDATION_FAILED', field));
    });

    it('shows an order’s history with snake_case keys and amounts as two-decimal strings, and who resolved it', async () => {
      const detail = await admin('GET', `/admin/v1/orders/${unknown}`, undefined, as(auditor));
      const placed = detail.body.data.history.find((e: { type: string }) => e.type === 'OrderPlaced');
      expect(placed.data).toMatchObject({
        order_no: unknown,
        merchant_id: merchant.merchantId,
        out_trade_no: 'TICKET-2',
        amount: '1.20',
        account_fields: { server_id: '9' },
      });
      expect(Object.keys(placed.data).filter((k) => /[A-Z]/.test(k))).toEqual([]);
      expect(detail.body.data).toMatchObject({ resolution: null, created_at: expect.stringMatching(/\+00:00$/) });
    });
  });

  describe('staff', () => {
    it('lists staff without tokens, filtered by role and status', async () => {
      const listed = await walk('/admin/v1/staff', 'staff', 1);
      expect(listed.map((s) => s.staff_id)).toEqual([auditor.staff_id, reconciler.staff_id]);
      expect(listed[0]).toEqual({
        staff_id: auditor.staff_id,
        name: 'Aldo',
        role: 'auditor',
        status: 'active',
        created_at: expect.stringMatching(/\+00:00$/),
        created_by: 'admin',
        created_by_name: 'Administrator (ADMIN_TOKEN)',
        disabled_at: null,
        disabled_by: null,
        disabled_by_name: null,
        token_rotated_at: null,
      });
      expect((await admin('GET', '/admin/v1/staff?role=reconciler')).body.data.staff.map((s: { name: string }) => s.name)).toEqual(['Rita']);
      expect((await admin('GET', '/admin/v1/staff', undefined, as(reconciler))).body).toEqual(failure('FORBIDDEN'));
    });

    it('rotates a token: the new one works at once, the old one never again', async () => {
      const member = await admin.createStaff('auditor', 'Olga');
      const rotated = await admin('POST', `/admin/v1/staff/${member.staff_id}/token`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.data).toMatchObject({
        staff_id: member.staff_id,
        status: 'active',
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        token_rotated_at: expect.any(String),
      });
      expect((await admin('GET', '/admin/v1/orders', undefined, { token: member.token })).status).toBe(401);
      expect((await admin('GET', '/admin/v1/orders', undefined, { token: rotated.body.data.token })).status).toBe(200);
      const { rows } = await db.pool.query(`select staff_id, action from back_office_audit where target = $1 order by id`, [`staff:${member.staff_id}`]);
      expect(rows).toEqual([
        { staff_id: 'admin', action: 'staff.created' },
        { staff_id: 'admin', action: 'staff.token_rotated' },
      ]);
    });

    it('disables a member: the token stops working, the member is listed as disabled, and gets no new token', async () => {
      const member = await admin.createStaff('reconciler', 'Dora');
      const other = await admin.createStaff('admin', 'Ops');
      const disabled = await admin('POST', `/admin/v1/staff/${member.staff_id}/disable`, undefined, { token: other.token });
      expect(disabled.body.data).toMatchObject({ status: 'disabled', disabled_by: other.staff_id, disabled_by_name: 'Ops', disabled_at: expect.any(String) });
      expect((await admin('GET', '/admin/v1/reconciliation/orders', undefined, { token: member.token })).body).toEqual(failure('UNAUTHORIZED'));
      // Disabling twice changes nothing more.
      expect((await admin('POST', `/admin/v1/staff/${member.staff_id}/disable`)).body.data.disabled_by).toBe(other.staff_id);
      expect((await admin('GET', '/admin/v1/staff?status=disabled')).body.data.staff.map((s: { staff_id: string }) => s.staff_id)).toEqual([member.staff_id]);
      expect((await admin('POST', `/admin/v1/staff/${member.staff_id}/token`)).body).toEqual(failure('STAFF_DISABLED'));
      expect((await admin('POST', `/admin/v1/staff/${other.staff_id}/disable`, undefined, { token: other.token })).body).toEqual(
        failure('CANNOT_DISABLE_SELF'),
      );
      expect((await admin('POST', '/admin/v1/staff/stf_nobody/disable')).body).toEqual(failure('STAFF_NOT_FOUND'));
      expect((await admin('POST', '/admin/v1/staff/admin/token')).body).toEqual(failure('STAFF_NOT_FOUND'));
    });
  });

  describe('status and the hash chain', () => {
    it('reports projection lag, backlogs and the oldest unknown-result order', async () => {
      await service.catchUp();
      const reply = await admin('GET', '/admin/v1/status');
      expect(reply.status).toBe(200);
      const data = reply.body.data;
      expect(data.projections.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['orders', 'wallets']));
      expect(data.projections.find((p: { name: string }) => p.name === 'orders')).toMatchObject({ events_behind: 0, events_behind_at_least: false });
      expect(data.reconciliation).toMatchObject({
        unknown_result_orders: 1,
        oldest: { order_no: expect.any(String), merchant_id: merchant.merchantId, age_seconds: expect.any(Number) },
      });
      expect(data.fulfilment).toMatchObject({ pending: expect.any(Number), retrying: expect.any(Number) });
      expect(data.callbacks).toMatchObject({ pending: expect.any(Number), exhausted: 0 });
      expect((await admin('GET', '/admin/v1/status', undefined, as(auditor))).body).toEqual(failure('FORBIDDEN'));
    });

    it('checks a wallet’s hash chain in the log, and names the first broken link', async () => {
      const intact = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/chain`, undefined, as(auditor));
      expect(intact.body.data).toMatchObject({
        merchant_id: merchant.merchantId,
        intact: true,
        first_break: null,
        last_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(intact.body.data.events_checked).toBeGreaterThanOrEqual(4);
      // Tamper with one stored event's data, as a database superuser could (the log refuses edits otherwise).
      await db.pool.query(
        `begin;
         alter table es_events disable trigger es_events_immutable;
         update es_events set data = jsonb_set(data, '{amount}', '"1"') where stream_id = 'wallet-${merchant.merchantId}' and event_type = 'FundsDeposited';
         alter table es_events enable trigger es_events_immutable;
         commit;`,
      );
      const broken = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/chain`, undefined, as(auditor));
      expect(broken.body.data).toMatchObject({ intact: false, first_break: { revision: 1, problem: expect.stringContaining('hash does not match') } });
      expect((await admin('GET', '/admin/v1/wallets/mch_nobody/chain')).body).toEqual(failure('WALLET_NOT_FOUND'));
    });
  });
});
