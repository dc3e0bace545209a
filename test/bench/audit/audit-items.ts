import { Writable } from 'node:stream';
import { Pool } from 'pg';
import { WALLET_SNAPSHOT_INTERVAL } from '../../../projections/wallets.projection';
import { verifyReadModels } from '../../../src/auditing/verification/read-model-verifier';
import { writableSink, writeStatement } from '../../../src/auditing/statement-writer';
import { PostgresWalletSnapshots } from '../../../src/auditing/wallet-snapshots.reader';
import { balanceAsOf, openStatement } from '../../../src/auditing/wallet-statement';
import { EventStore } from '../../../src/ledger/ports/event-store.port';
import { walletStream } from '../../../src/ledger/streams';

/** What the items need to know about the ledger they run on. */
export interface AuditBenchLedger {
  hotMerchant: string;
  /** A merchant with a wallet far shorter than the hot one: its export shows what memory does not grow with. */
  smallMerchant: string;
  /** Recorded times of the hot wallet's first, middle and last events. */
  instants: { start: string; middle: string; end: string };
}

export interface ItemContext {
  pool: Pool;
  store: EventStore;
  ledger: AuditBenchLedger;
}

/** What an item did: how many events or lines, and a one-word verdict where there is one. */
export interface ItemResult {
  count: number;
  note: string;
}

export interface AuditItem {
  name: string;
  label: string;
  /** Fast items are timed over several runs after a warm-up; slow ones once. */
  repeat: boolean;
  /**
   * Runs in a process whose V8 heap is capped at this many MB, so that its
   * heap peak is memory the item kept, not garbage not yet collected.
   */
  heapCapMb?: number;
  run(context: ItemContext): Promise<ItemResult>;
}

/** Counts what is written and throws it away, honouring backpressure like a socket. */
class Discard extends Writable {
  bytes = 0;
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.bytes += chunk.length;
    setImmediate(done);
  }
}

const verify =
  (scope?: 'wallet' | 'merchant') =>
  async ({ pool, store, ledger }: ItemContext): Promise<ItemResult> => {
    const report = await verifyReadModels(pool, store, scope ? { merchantId: ledger.hotMerchant, scope } : {});
    return { count: report.events_checked, note: report.clean ? 'clean' : `${report.differences_total} differences` };
  };

const exportStatement =
  (merchant: (ledger: AuditBenchLedger) => string) =>
  async ({ pool, store, ledger }: ItemContext): Promise<ItemResult> => {
    const statement = await openStatement(store, new PostgresWalletSnapshots(pool), merchant(ledger), {});
    if (!statement) throw new Error(`no wallet for ${merchant(ledger)}`);
    const sink = new Discard();
    const lines = await writeStatement(writableSink(sink), 'csv', statement);
    return { count: lines, note: `${(sink.bytes / 1e6).toFixed(1)} MB` };
  };

const balanceAt =
  (instant: keyof AuditBenchLedger['instants']) =>
  async ({ pool, store, ledger }: ItemContext): Promise<ItemResult> => {
    const result = await balanceAsOf(store, new PostgresWalletSnapshots(pool), ledger.hotMerchant, { at: new Date(ledger.instants[instant]) });
    if (!result) throw new Error(`no wallet for ${ledger.hotMerchant}`);
    const replayed = result.events_applied - (result.from_snapshot ? result.from_snapshot.revision + 1 : 0);
    return { count: result.events_applied, note: `${replayed} replayed` };
  };

/** About 30 MB of the measuring process's heap are in use before an item starts; a whole wallet's 41.5 MB export does not fit beside them. */
export const EXPORT_HEAP_CAP_MB = 48;

export const AUDIT_ITEMS: readonly AuditItem[] = [
  { name: 'verify-wallet', label: 'verify one wallet', repeat: false, run: verify('wallet') },
  { name: 'verify-merchant', label: 'verify one merchant (wallet + orders)', repeat: false, run: verify('merchant') },
  { name: 'verify-all', label: 'verify all wallets (whole log)', repeat: false, run: verify() },
  {
    name: 'first-page',
    label: 'statement, first page (100 lines)',
    repeat: true,
    async run({ pool, store, ledger }) {
      const page = await openStatement(store, new PostgresWalletSnapshots(pool), ledger.hotMerchant, {}, 100);
      const sink = new Discard();
      const lines = await writeStatement(writableSink(sink), 'json', page!, { envelope: true });
      return { count: lines, note: `${(sink.bytes / 1e3).toFixed(0)} kB` };
    },
  },
  { name: 'export-small', label: 'statement export, short wallet (CSV)', repeat: false, run: exportStatement((l) => l.smallMerchant) },
  { name: 'export-hot', label: 'statement export, whole wallet (CSV)', repeat: false, run: exportStatement((l) => l.hotMerchant) },
  // The same exports with the heap capped: what an export keeps, which must not grow with the wallet.
  {
    name: 'export-small-capped',
    label: `statement export, short wallet, heap capped at ${EXPORT_HEAP_CAP_MB} MB`,
    repeat: false,
    heapCapMb: EXPORT_HEAP_CAP_MB,
    run: exportStatement((l) => l.smallMerchant),
  },
  {
    name: 'export-hot-capped',
    label: `statement export, whole wallet, heap capped at ${EXPORT_HEAP_CAP_MB} MB`,
    repeat: false,
    heapCapMb: EXPORT_HEAP_CAP_MB,
    run: exportStatement((l) => l.hotMerchant),
  },
  { name: 'balance-start', label: 'balance as of the start', repeat: true, run: balanceAt('start') },
  { name: 'balance-middle', label: 'balance as of the middle (worst case)', repeat: true, run: balanceAt('middle') },
  { name: 'balance-end', label: 'balance as of the end', repeat: true, run: balanceAt('end') },
];

/**
 * The instants and the short wallet the items need, read from the built
 * ledger. The middle is the worst case: the last event before the snapshot
 * past the middle, 999 events after the one before it.
 */
export async function describeLedger(store: EventStore, hotMerchant: string, smallMerchant: string, hotEvents: number): Promise<AuditBenchLedger> {
  const at = async (revision: number) => (await store.readStream(walletStream(hotMerchant), BigInt(revision), 1))[0].createdAt.toISOString();
  const middle = Math.min(hotEvents - 1, Math.ceil(hotEvents / 2 / WALLET_SNAPSHOT_INTERVAL) * WALLET_SNAPSHOT_INTERVAL + WALLET_SNAPSHOT_INTERVAL - 2);
  return { hotMerchant, smallMerchant, instants: { start: await at(0), middle: await at(middle), end: await at(hotEvents - 1) } };
}
