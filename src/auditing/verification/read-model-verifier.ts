import { Pool } from 'pg';
import { WALLET_SNAPSHOT_INTERVAL } from '../../../projections/wallets.projection';
import { comparePositions, EventStore, formatPosition, GlobalPosition, RecordedEvent, START } from '../../ledger/ports/event-store.port';
import { orderStream, walletStream } from '../../ledger/streams';
import { readAhead } from '../read-ahead';
import { Difference, DifferenceList, referenceOf, without } from './differences';
import { lineDigest } from './line-digest';
import { isFinalStage } from '../../ledger/order/order.decider';
import { expectedOrderRow, ExpectedWalletRows, LedgerFold, OrderFacts } from './ledger-fold';
import {
  differingOrders,
  finalOrderRowsOf,
  lineDigests,
  linesIn,
  orderNosOf,
  orderRows,
  readTablesAtCheckpoints,
  snapshotsToCheck,
  strayWalletRows,
  TablesAtCheckpoints,
  walletRanges,
  walletRowKey,
} from './read-model-tables';
import { streamSlices } from '../../ledger/wallet/wallet-slices';
import { holdKey, merchantHoldKey, openedWallet, WalletEvent } from '../../ledger/wallet/wallet.decider';
import { decodeEvent } from '../../ledger/event-codec';

export type { Cell, Difference, EventReference, ReadModelTable, Row } from './differences';
export { MAX_LISTED_DIFFERENCES } from './differences';

/**
 * Replays the log with the deciders' own evolve and compares the result with
 * the read models, row by row and column by column. Amounts are compared in
 * minor units, as the tables store them. Only what the projections have
 * applied is compared: each projection's events up to its own checkpoint.
 *
 * Three scopes, each reading only what it checks:
 * - the whole log, in global order, a batch at a time;
 * - one wallet ("wallet"): its stream, a slice at a time, against its
 *   balance, holds, statement lines and snapshots;
 * - one merchant ("merchant", the default with a merchant): the wallet and
 *   the merchant's orders, their streams read many at a time.
 * Memory stays flat in all three (see LedgerFold), and the next read is
 * under way while a batch is folded and checked.
 */

export interface VerificationReport {
  clean: boolean;
  merchant_id: string | null;
  events_checked: number;
  /** The last event compared (formatPosition), "-1/-1" when none. */
  last_position: string;
  projection_positions: { orders: string; wallets: string };
  /** At most MAX_LISTED_DIFFERENCES; differences_total counts them all. */
  differences: Difference[];
  differences_total: number;
}

export type VerificationScope = 'wallet' | 'merchant';

export interface VerifyOptions {
  merchantId?: string;
  /** With a merchant: its wallet alone, or the wallet and its orders (the default). */
  scope?: VerificationScope;
  /** Called after each replayed batch with the events checked so far. */
  onProgress?: (events: number) => void;
}

export class WalletNotFoundError extends Error {
  constructor(readonly merchantId: string) {
    super(`No wallet for merchant ${merchantId}: no events and no read-model rows`);
    this.name = 'WalletNotFoundError';
  }
}

const LOG_BATCH = 2000;
/** A wallet is read this many slices ahead: its events lie scattered over the log, so each read waits on the disk or the cache. */
const VERIFY_SLICES_AHEAD = 3;
const ORDER_STREAMS_PER_READ = 500;
const ROWS_PER_LOOKUP = 1000;

export async function verifyReadModels(pool: Pool, store: EventStore, options: VerifyOptions = {}): Promise<VerificationReport> {
  const { merchantId } = options;
  const walletOnly = merchantId !== undefined && options.scope === 'wallet';
  const tables = await readTablesAtCheckpoints(pool, merchantId, !walletOnly);
  const differences = new DifferenceList();
  const fold = new LedgerFold(tables.checkpoints, new Set(tables.holds.keys()));
  const orders = new OrderComparison(pool, tables);
  const checks = new CheckPipeline(differences);
  // Checks a batch's rows while the next batch is folded; the batches' differences are kept in order.
  const checkBatch = () => {
    const [walletRows, settled, events] = [fold.takeWalletRows(), fold.takeSettledOrders(), fold.events];
    return checks.push(async (out) => {
      await Promise.all([compareWalletRows(pool, store, walletRows, out), orders.compareSettled(settled, out)]);
      options.onProgress?.(events);
    });
  };

  if (merchantId === undefined) {
    const { orders: o, wallets: w } = tables.checkpoints;
    for await (const batch of logBatches(store, comparePositions(o, w) > 0 ? o : w)) {
      for (const event of batch) fold.apply(event);
      await checkBatch();
    }
  } else {
    const walletEvents = await foldWalletStream(store, fold, merchantId, checkBatch, !walletOnly);
    const orderNos = walletOnly ? [] : await merchantOrderNos(pool, merchantId, walletEvents.orderNos);
    if (walletEvents.read === 0 && orderNos.length === 0 && tables.wallets.size === 0 && tables.holds.size === 0) {
      throw new WalletNotFoundError(merchantId);
    }
    for await (const streams of orderStreams(store, orderNos)) {
      // Another merchant's order (a read-model row under the wrong merchant) is not this merchant's to fold.
      for (const events of streams) if (events[0]?.data.merchantId === merchantId) for (const event of events) fold.apply(event);
      await checkBatch();
    }
  }
  await checks.drain();

  compareWallets(fold, tables, differences);
  if (!walletOnly) {
    await orders.compareOpen([...fold.orders.values()], differences);
    await orders.findStrays(store, merchantId, differences);
  }
  for (const stray of await strayWalletRows(pool, fold.wallets, tables.checkpoints.wallets, merchantId)) {
    differences.stray(stray.table, { merchant_id: stray.merchantId, revision: stray.revision }, stray.row, null);
  }
  return {
    clean: differences.total === 0,
    merchant_id: merchantId ?? null,
    events_checked: fold.events,
    last_position: formatPosition(fold.last),
    projection_positions: { orders: formatPosition(tables.checkpoints.orders), wallets: formatPosition(tables.checkpoints.wallets) },
    differences: differences.sorted(),
    differences_total: differences.total,
  };
}

// ---------------------------------------------------------------------------
// Reading: the log, a wallet, a merchant's orders.

/**
 * The log in global order up to `until`, a batch at a time. `until` is a
 * projection's checkpoint, which was readable when the projection read it,
 * so nothing up to it waits behind a running transaction.
 */
function logBatches(store: EventStore, until: GlobalPosition): AsyncGenerator<RecordedEvent[]> {
  const read = (after: GlobalPosition) => () => store.readAll(after, LOG_BATCH, { upToHorizon: true });
  return readAhead(read(START), (batch) => {
    const last = batch[batch.length - 1];
    return last && comparePositions(last.position, until) < 0 ? read(last.position) : undefined;
  });
}

/** Folds the wallet's events up to the checkpoint; returns how many were read and, if asked, the orders they name. */
async function foldWalletStream(store: EventStore, fold: LedgerFold, merchantId: string, checkBatch: () => Promise<void>, withOrders: boolean) {
  const orderNos = new Set<string>();
  let read = 0;
  const slices = streamSlices((...slice) => store.readStreamForCheck(...slice), walletStream(merchantId), -1n, { ahead: VERIFY_SLICES_AHEAD });
  for await (const slice of slices) {
    read += slice.length;
    // Positions grow with revisions: the first event past the checkpoint ends the replay.
    const applied = slice.findIndex((event) => !fold.apply(event));
    const folded = applied < 0 ? slice : slice.slice(0, applied);
    if (withOrders) for (const event of folded) if (typeof event.data.orderNo === 'string') orderNos.add(event.data.orderNo);
    await checkBatch();
    if (applied >= 0) break;
  }
  return { read, orderNos };
}

/**
 * The merchant's orders: those the read model lists, and those the wallet
 * ever held money for. (An order refused before any freeze whose row is
 * missing as well is found by the whole-log check only.)
 */
async function merchantOrderNos(pool: Pool, merchantId: string, fromWallet: Set<string>): Promise<string[]> {
  for (const orderNo of await orderNosOf(pool, merchantId)) fromWallet.add(orderNo);
  return [...fromWallet];
}

/** The orders' streams, many per read. */
async function* orderStreams(store: EventStore, orderNos: readonly string[]): AsyncGenerator<RecordedEvent[][]> {
  if (orderNos.length === 0) return;
  let from = 0;
  const read = () => store.readStreams(orderNos.slice(from, from + ORDER_STREAMS_PER_READ).map(orderStream));
  yield* readAhead(read, () => ((from += ORDER_STREAMS_PER_READ) < orderNos.length ? read : undefined));
}

// ---------------------------------------------------------------------------
// Comparing.

/**
 * Statement lines and snapshots: insert-only, so compared batch by batch as
 * the replay goes. Lines are compared a wallet at a time by digest, and read
 * one by one only for a wallet whose digest differs. Snapshots are one in a
 * thousand rows or so: read, with their events' time and hash, and compared.
 */
async function compareWalletRows(pool: Pool, store: EventStore, expected: ExpectedWalletRows[], out: DifferenceList): Promise<void> {
  // A wallet's rows in a batch, in revision order: a wallet's events come in runs.
  const byWallet = new Map<string, ExpectedWalletRows[]>();
  let run: ExpectedWalletRows[] | undefined;
  for (const e of expected) {
    if (run?.[0].merchantId !== e.merchantId) {
      run = byWallet.get(e.merchantId) ?? [];
      byWallet.set(e.merchantId, run);
    }
    run.push(e);
  }
  const ranges = walletRanges(expected);
  const [digests, snapshots] = await Promise.all([lineDigests(pool, ranges), snapshotsToCheck(pool, store, ranges, WALLET_SNAPSHOT_INTERVAL)]);
  // A line at WalletOpened is reported with the other lines no event explains.
  const linesOf = (merchantId: string) => (byWallet.get(merchantId) ?? []).filter((e) => e.hasLine);
  const differing = new Map([...ranges].filter(([merchantId]) => digests.get(merchantId) !== lineDigest(linesOf(merchantId).map((e) => e.lineDigestText()))));
  const found = await linesIn(pool, differing);
  for (const [merchantId] of differing) {
    for (const e of linesOf(merchantId)) {
      out.compareRow('rm_statement_lines', { merchant_id: e.merchantId, revision: e.revision }, e.line(), found.get(walletRowKey(e)), e.by, e.by);
    }
  }
  for (const [merchantId, rows] of byWallet) {
    const toCheck = snapshots.get(merchantId);
    if (!toCheck) continue;
    const first = rows[0].revision;
    for (const revision of [...toCheck.keys()].sort((a, b) => a - b)) {
      const e = rows[revision - first]?.revision === revision ? rows[revision - first] : rows.find((r) => r.revision === revision);
      const { row, event } = toCheck.get(revision)!;
      // A snapshot is due at every interval; one elsewhere (from another interval) must be right too.
      if (e) out.compareRow('rm_wallet_snapshots', { merchant_id: merchantId, revision }, e.snapshot(event), row, e.by, e.by);
    }
  }
}

function compareWallets(fold: LedgerFold, tables: TablesAtCheckpoints, out: DifferenceList): void {
  for (const [merchantId, facts] of fold.wallets) {
    const { balance, frozen, holds } = openedWallet(facts.state);
    const expected = { balance: balance.toString(), frozen: frozen.toString(), available: (balance - frozen).toString() };
    const last = referenceOf(facts.last!);
    out.compareRow('rm_wallets', { merchant_id: merchantId }, expected, tables.wallets.get(merchantId), last, facts.opened ? referenceOf(facts.opened) : last);
    tables.wallets.delete(merchantId);

    for (const [key, frozenBy] of facts.holdsBy) {
      const rowKey = merchantHoldKey(merchantId, key);
      const amount = holds.get(key)!.toString();
      const { orderNo, attempt } = decodeEvent<Extract<WalletEvent, { type: 'FundsFrozen' }>>(frozenBy).data;
      const holdRow = { merchant_id: merchantId, order_no: orderNo, attempt };
      const by = referenceOf(frozenBy);
      out.compareRow('rm_wallet_holds', holdRow, { amount }, tables.holds.get(rowKey), by, by);
      tables.holds.delete(rowKey);
    }
  }
  for (const [merchantId, row] of tables.wallets) out.stray('rm_wallets', { merchant_id: merchantId }, without(row, 'merchant_id'), null);
  for (const row of tables.holds.values()) {
    const closedBy = fold.wallets.get(row.merchant_id)?.closedBy.get(holdKey(row.order_no, row.attempt));
    out.stray(
      'rm_wallet_holds',
      { merchant_id: row.merchant_id, order_no: row.order_no, attempt: row.attempt },
      { amount: row.amount },
      closedBy ? referenceOf(closedBy) : null,
    );
  }
}

/**
 * Orders are compared in two places. A final order cannot change again, so
 * its row is looked up and compared as soon as the fold sees it final, and
 * the fold forgets it. An order still open at the checkpoints is compared at
 * the end with the row read with the checkpoints. Final rows that no order
 * accounts for show up as a count: each merchant's final rows at the
 * checkpoints against those the replay matched; only a merchant whose count
 * is short is searched row by row.
 */
class OrderComparison {
  private readonly matchedFinal = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly tables: TablesAtCheckpoints,
  ) {}

  /** Orders the fold saw become final: Postgres compares them with their rows, which can no longer change. */
  async compareSettled(settled: OrderFacts[], out: DifferenceList): Promise<void> {
    const current = settled.filter((facts) => !this.compareListed(facts, out)).map((facts) => ({ facts, orderNo: facts.orderNo, ...expectedOrderRow(facts) }));
    for (let i = 0; i < current.length; i += ROWS_PER_LOOKUP) {
      const part = current.slice(i, i + ROWS_PER_LOOKUP);
      const differing = await differingOrders(this.pool, part);
      for (const { facts, orderNo, row, explainers } of part) {
        const actual = differing.has(orderNo) ? differing.get(orderNo) : row;
        if (actual && isFinalStage(actual.stage)) this.countFinal(String(actual.merchant_id));
        if (differing.has(orderNo)) out.compareRow('rm_orders', { order_no: orderNo }, row, actual, explainers, facts.placedBy);
      }
    }
  }

  /** Orders still open at the checkpoints: against the rows read with the checkpoints, and what is left of those rows is stray. */
  async compareOpen(open: OrderFacts[], out: DifferenceList): Promise<void> {
    const unlisted = open.filter((facts) => !this.compareListed(facts, out));
    // Missing at the checkpoints, or already final there: either way a difference, shown with the row as it is now.
    for (let i = 0; i < unlisted.length; i += ROWS_PER_LOOKUP) {
      const part = unlisted.slice(i, i + ROWS_PER_LOOKUP);
      const rows = await orderRows(
        this.pool,
        part.map((f) => f.orderNo),
      );
      for (const facts of part) {
        const actual = rows.get(facts.orderNo);
        if (actual && isFinalStage(actual.stage)) this.countFinal(String(actual.merchant_id));
        const { row, explainers } = expectedOrderRow(facts);
        out.compareRow('rm_orders', { order_no: facts.orderNo }, row, actual, explainers, facts.placedBy);
      }
    }
    for (const [orderNo, row] of this.tables.pendingOrders) out.stray('rm_orders', { order_no: orderNo }, without(row, 'order_no'), null);
    this.tables.pendingOrders.clear();
  }

  /** Final rows at the checkpoints that no replayed order matched: rows of orders whose stream is empty, or is another merchant's. */
  async findStrays(store: EventStore, merchantId: string | undefined, out: DifferenceList): Promise<void> {
    for (const [owner, count] of this.tables.finalOrders) {
      let missing = count - (this.matchedFinal.get(owner) ?? 0);
      for (let after = ''; missing > 0;) {
        const rows = await finalOrderRowsOf(this.pool, owner, after, ROWS_PER_LOOKUP);
        if (rows.length === 0) break;
        after = rows[rows.length - 1].order_no;
        const streams = await store.readStreams(rows.map((r) => orderStream(r.order_no)));
        rows.forEach((row, i) => {
          const placedBy = streams[i][0]?.data.merchantId;
          const unexplained = streams[i].length === 0 || (merchantId !== undefined && placedBy !== merchantId);
          if (!unexplained || missing <= 0) return;
          missing--;
          out.stray('rm_orders', { order_no: row.order_no }, without(row, 'order_no'), null);
        });
      }
    }
  }

  /** Compares an order with the row read with the checkpoints, if the read model listed it as open then. */
  private compareListed(facts: OrderFacts, out: DifferenceList): boolean {
    const atCheckpoints = this.tables.pendingOrders.get(facts.orderNo);
    if (!atCheckpoints) return false;
    this.tables.pendingOrders.delete(facts.orderNo);
    const { row, explainers } = expectedOrderRow(facts);
    out.compareRow('rm_orders', { order_no: facts.orderNo }, row, atCheckpoints, explainers, facts.placedBy);
    return true;
  }

  private countFinal(merchantId: string): void {
    this.matchedFinal.set(merchantId, (this.matchedFinal.get(merchantId) ?? 0) + 1);
  }
}

/**
 * A batch's checks run while the next batch is read and folded; handing in
 * the next batch's checks waits for the previous batch's. Each collects its
 * own differences, which join the report in batch order, so which
 * differences a long report lists does not depend on timing.
 */
class CheckPipeline {
  private running?: { done: Promise<void>; found: DifferenceList };

  constructor(private readonly out: DifferenceList) {}

  async push(check: (out: DifferenceList) => Promise<void>): Promise<void> {
    const found = new DifferenceList();
    const done = check(found);
    done.catch(() => undefined); // awaited in turn
    const previous = this.running;
    this.running = { done, found };
    if (previous) await this.settle(previous);
  }

  async drain(): Promise<void> {
    const last = this.running;
    this.running = undefined;
    if (last) await this.settle(last);
  }

  private async settle({ done, found }: { done: Promise<void>; found: DifferenceList }): Promise<void> {
    await done;
    this.out.absorb(found);
  }
}
