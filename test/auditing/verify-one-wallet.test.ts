import { Pool } from 'pg';
import { verifyReadModels } from '../../src/auditing/verification/read-model-verifier';
import { EventStore, formatPosition, RecordedEvent } from '../../src/ledger/ports/event-store.port';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { ORDER_STREAM_PREFIX, walletStream } from '../../src/ledger/streams';
import { allMigrations } from '../../src/schema';
import { adminClient } from '../back-office/admin-client';
import { buildLedger, BuiltLedger } from '../bench/audit/bulk-ledger';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { buildWalletHistory } from '../support/wallet-history';

const VERIFY = '/admin/v1/audit/verify';

/** The store, with a record of every read made through it. */
function recordingStore(store: EventStore) {
  const reads: { method: string; streams: string[] }[] = [];
  const recording: EventStore = {
    append: (...args) => store.append(...args),
    readStream: (streamId, ...rest) => (reads.push({ method: 'readStream', streams: [streamId] }), store.readStream(streamId, ...rest)),
    readStreamForReplay: (streamId, ...rest) => (
      reads.push({ method: 'readStreamForReplay', streams: [streamId] }),
      store.readStreamForReplay(streamId, ...rest)
    ),
    readStreamForCheck: (streamId, ...rest) => (reads.push({ method: 'readStreamForCheck', streams: [streamId] }), store.readStreamForCheck(streamId, ...rest)),
    readStreamForLoad: (streamId, ...rest) => (reads.push({ method: 'readStreamForLoad', streams: [streamId] }), store.readStreamForLoad(streamId, ...rest)),
    readEventsAt: (keys) => (reads.push({ method: 'readEventsAt', streams: keys.map((k) => k.streamId) }), store.readEventsAt(keys)),
    readStreams: (streamIds) => (reads.push({ method: 'readStreams', streams: [...streamIds] }), store.readStreams(streamIds)),
    readAll: (...args) => (reads.push({ method: 'readAll', streams: [] }), store.readAll(...args)),
    subscribeToAll: (options) => store.subscribeToAll(options),
    close: () => store.close(),
  };
  return { recording, reads };
}

const reference = (e: RecordedEvent) => ({ stream: e.streamId, revision: Number(e.revision), type: e.type, position: formatPosition(e.position) });

describe('verifying one wallet reads that wallet, whatever else the log holds', () => {
  let db: TestDatabase;
  let service: RunningService;
  let built: BuiltLedger;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };

  beforeAll(async () => {
    db = await createTestDatabase();
    // A log of other merchants' business, written in bulk before the service starts.
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: true }));
    built = await buildLedger(db.pool, { hotMovements: 4_000, totalEvents: 60_000, merchants: 12 });
    service = await startService(db);
    admin = adminClient(service.url);
    auditor = await admin.createStaff('auditor');
    merchant = await provisionMerchant(service, { deposit: 100_000n });
    await buildWalletHistory(service.commands, merchant.merchantId, 300, 'OW');
    await service.catchUp();
  });
  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  const verify = (body: unknown) => admin('POST', VERIFY, body, auditor);

  it('is clean, and counts the wallet (and for the merchant its orders) out of a log many times its size', async () => {
    const walletEvents = await service.store.readStream(walletStream(merchant.merchantId));
    const wallet = await verify({ merchant_id: merchant.merchantId, scope: 'wallet' });
    expect(wallet.body.data).toMatchObject({ clean: true, events_checked: walletEvents.length, differences_total: 0 });

    const whole = await verify({});
    expect(whole.body.data).toMatchObject({ clean: true, differences_total: 0 });
    expect(whole.body.data.events_checked).toBeGreaterThan(built.events + walletEvents.length);
    expect(whole.body.data.events_checked).toBeGreaterThan(50 * walletEvents.length);

    const withOrders = await verify({ merchant_id: merchant.merchantId });
    expect(withOrders.body.data.clean).toBe(true);
    expect(withOrders.body.data.events_checked).toBeGreaterThan(walletEvents.length + 300);
    expect(withOrders.body.data.events_checked).toBeLessThan(whole.body.data.events_checked / 10);
  });

  it('reads the wallet stream alone, or with its own order streams: never the log', async () => {
    const { recording, reads } = recordingStore(service.store);
    const wallet = await verifyReadModels(service.pool as Pool, recording, { merchantId: merchant.merchantId, scope: 'wallet' });
    expect(wallet.clean).toBe(true);
    // The wallet's stream, and the events of its snapshots (their time and hash): nothing else.
    expect(new Set(reads.map((r) => r.method))).toContain('readStreamForCheck');
    expect(new Set(reads.flatMap((r) => r.streams.map((stream) => `${r.method} ${stream}`)))).toEqual(
      new Set(reads.map((r) => `${r.method} ${walletStream(merchant.merchantId)}`)),
    );
    expect(reads.every((r) => ['readStreamForCheck', 'readEventsAt'].includes(r.method))).toBe(true);

    reads.length = 0;
    const withOrders = await verifyReadModels(service.pool as Pool, recording, { merchantId: merchant.merchantId });
    expect(withOrders.clean).toBe(true);
    expect(reads.some((r) => r.method === 'readAll')).toBe(false);
    const orderStreams = reads.filter((r) => r.method === 'readStreams').flatMap((r) => r.streams);
    const { rows } = await service.pool.query<{ order_no: string }>('select order_no from rm_orders where merchant_id = $1', [merchant.merchantId]);
    expect(new Set(orderStreams)).toEqual(new Set(rows.map((r) => `${ORDER_STREAM_PREFIX}${r.order_no}`)));
    const streamReads = reads.filter((r) => ['readStream', 'readStreamForReplay', 'readStreamForCheck', 'readEventsAt'].includes(r.method));
    expect(streamReads.length).toBeGreaterThan(0);
    expect(streamReads.every((r) => r.streams.every((stream) => stream === walletStream(merchant.merchantId)))).toBe(true);
  });

  it('pinpoints a row altered in that wallet, and only there; the whole log names both', async () => {
    const ours = await service.store.readStream(walletStream(merchant.merchantId));
    const theirs = await service.store.readStream(walletStream(built.hotMerchant), 2500n, 1);
    const mine = ours[ours.length - 10];
    const alter = (merchantId: string, revision: bigint, by: number) =>
      service.pool.query('update rm_statement_lines set balance_after = balance_after + $3 where merchant_id = $1 and revision = $2', [
        merchantId,
        revision.toString(),
        by,
      ]);
    await alter(merchant.merchantId, mine.revision, 3);
    await alter(built.hotMerchant, theirs[0].revision, 5);
    try {
      for (const scope of ['wallet', 'merchant']) {
        const reply = await verify({ merchant_id: merchant.merchantId, scope });
        expect(reply.body.data.differences).toEqual([
          expect.objectContaining({
            table: 'rm_statement_lines',
            key: { merchant_id: merchant.merchantId, revision: Number(mine.revision) },
            column: 'balance_after',
            explained_by: reference(mine),
          }),
        ]);
        // Amounts in the reply are two-decimal strings: 3 minor units apart is 0.03.
        expect(Math.round((Number(reply.body.data.differences[0].actual) - Number(reply.body.data.differences[0].expected)) * 100)).toBe(3);
      }
      const whole = await verify({});
      const keys = whole.body.data.differences.map((d: { key: unknown }) => d.key);
      expect(keys).toHaveLength(2);
      expect(keys).toEqual(
        expect.arrayContaining([
          { merchant_id: built.hotMerchant, revision: Number(theirs[0].revision) },
          { merchant_id: merchant.merchantId, revision: Number(mine.revision) },
        ]),
      );
    } finally {
      await alter(merchant.merchantId, mine.revision, -3);
      await alter(built.hotMerchant, theirs[0].revision, -5);
    }
  });

  it('names a final order row no order explains and an altered final row; the wallet alone does not look at orders', async () => {
    const { rows } = await service.pool.query<{ order_no: string }>(
      `select order_no from rm_orders where merchant_id = $1 and stage = 'succeeded' order by order_no limit 1`,
      [merchant.merchantId],
    );
    const altered = rows[0].order_no;
    await service.pool.query(`update rm_orders set fail_code = 'ALTERED' where order_no = $1`, [altered]);
    await service.pool.query(
      `insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, updated_at, completed_at)
       values ('TGHOSTFINAL', $1, 'ghost-final', 1, 'succeeded', 'mlbb-86', '1', '{}', 250, 'USD', now(), now(), now())`,
      [merchant.merchantId],
    );
    try {
      for (const body of [{ merchant_id: merchant.merchantId }, {}]) {
        const reply = await verify(body);
        expect(reply.body.data.differences).toHaveLength(2);
        expect({ body, differences: reply.body.data.differences }).toEqual({
          body,
          differences: expect.arrayContaining([
            {
              table: 'rm_orders',
              key: { order_no: 'TGHOSTFINAL' },
              column: null,
              expected: null,
              actual: { merchant_id: merchant.merchantId, stage: 'succeeded', attempt: 1, amount: '2.50', fail_code: null },
              explained_by: null,
            },
            expect.objectContaining({ table: 'rm_orders', key: { order_no: altered }, column: 'fail_code', expected: null, actual: 'ALTERED' }),
          ]),
        });
      }
      expect((await verify({ merchant_id: merchant.merchantId, scope: 'wallet' })).body.data.clean).toBe(true);
    } finally {
      await service.pool.query(`update rm_orders set fail_code = null where order_no = $1`, [altered]);
      await service.pool.query(`delete from rm_orders where order_no = 'TGHOSTFINAL'`);
    }
  });

  it('names statement lines no event of the wallet explains: at its opening and past its last event', async () => {
    const ours = await service.store.readStream(walletStream(merchant.merchantId));
    const last = Number(ours[ours.length - 1].revision);
    const { position } = ours[ours.length - 1];
    const insert = (revision: number) =>
      service.pool.query(
        `insert into rm_statement_lines (merchant_id, revision, position_commit, position_prepare, entry_type, amount, balance_after, frozen_after, available_after, occurred_at)
         values ($1, $2, $3, $4, 'FundsDeposited', 1, 1, 0, 1, now())`,
        [merchant.merchantId, revision, position.commit.toString(), position.prepare.toString()],
      );
    // Revision 0 is WalletOpened, which has no line; the other is beyond the stream.
    await insert(0);
    await insert(last + 3);
    try {
      for (const scope of ['wallet', 'merchant']) {
        const reply = await verify({ merchant_id: merchant.merchantId, scope });
        expect({ scope, strays: reply.body.data.differences }).toEqual({
          scope,
          strays: [0, last + 3].map((revision) =>
            expect.objectContaining({
              table: 'rm_statement_lines',
              key: { merchant_id: merchant.merchantId, revision },
              column: null,
              expected: null,
              explained_by: null,
            }),
          ),
        });
      }
      expect((await verify({ merchant_id: built.hotMerchant, scope: 'wallet' })).body.data.clean).toBe(true);
    } finally {
      await service.pool.query('delete from rm_statement_lines where merchant_id = $1 and revision = any($2)', [merchant.merchantId, [0, last + 3]]);
    }
  });
  it('a wallet nobody has is 404, and scope needs a merchant', async () => {
    expect((await verify({ merchant_id: 'mch_nobody', scope: 'wallet' })).body).toMatchObject({ code: 'WALLET_NOT_FOUND' });
    expect((await verify({ scope: 'wallet' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'scope' });
    expect((await verify({ merchant_id: merchant.merchantId, scope: 'everything' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'scope' });
  });
});
