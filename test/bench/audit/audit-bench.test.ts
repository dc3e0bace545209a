import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { migrate } from '../../../src/infrastructure/postgres/migrations';
import { walletStream } from '../../../src/ledger/streams';
import { allMigrations } from '../../../src/schema';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { AUDIT_ITEMS, AuditBenchLedger, describeLedger, ItemResult } from './audit-items';
import { buildLedger, BuiltLedger } from './bulk-ledger';

// The audit benchmark's ledger and items at a tiny size, so `npm test` keeps them working.
describe('bench:audit at a tiny size', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let built: BuiltLedger;
  let ledger: AuditBenchLedger;
  let smallWallet: number;
  const results = new Map<string, ItemResult>();

  beforeAll(async () => {
    db = await createTestDatabase('topup_bench_audit');
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
    built = await buildLedger(db.pool, { hotMovements: 4_000, totalEvents: 16_000, merchants: 4 });
    store = new PostgresEventStore(db.pool, { connection: db.config });
    ledger = await describeLedger(store, built.hotMerchant, 'mch_bench_001', built.hotWalletEvents);
    smallWallet = (await store.readStream(walletStream('mch_bench_001'))).length;
    for (const item of AUDIT_ITEMS) results.set(item.name, await item.run({ pool: db.pool, store, ledger }));
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('builds the log it was asked for, which verifies clean in every scope', () => {
    expect(built).toMatchObject({ events: 16_000, hotWalletEvents: 4_000 });
    expect(results.get('verify-wallet')).toEqual({ count: 4_000, note: 'clean' });
    expect(results.get('verify-merchant')!.note).toBe('clean');
    expect(results.get('verify-merchant')!.count).toBeGreaterThan(4_000 + built.hotOrders * 2);
    expect(results.get('verify-all')).toEqual({ count: 16_000, note: 'clean' });
  });

  it('pages, exports and folds what it reports', () => {
    expect(results.get('first-page')!.count).toBe(100);
    expect(results.get('export-hot')!.count).toBe(4_000);
    expect(results.get('export-small')!.count).toBe(smallWallet);
    expect(results.get('export-hot-capped')).toEqual(results.get('export-hot'));
    expect(results.get('export-small-capped')).toEqual(results.get('export-small'));
    expect(results.get('balance-start')).toEqual({ count: 1, note: '1 replayed' });
    // The middle is the worst case: 999 events after the snapshot at revision 1999.
    expect(results.get('balance-middle')).toEqual({ count: 2_999, note: '999 replayed' });
    expect(results.get('balance-end')).toEqual({ count: 4_000, note: '0 replayed' });
  });
});
