import { Pool } from 'pg';
import {
  comparePositions,
  EventStore,
  formatPosition,
  GlobalPosition,
  RecordedEvent,
  START,
} from '../infrastructure/event-store/event-store.port';
import { decodeEvent } from '../ledger/event-codec';
import { OrderEvent, orderDecider, OrderState } from '../ledger/order/order.decider';
import { ORDER_STREAM_PREFIX, orderStream, WALLET_STREAM_PREFIX, walletStream } from '../ledger/streams';
import { holdKey, WalletEvent, walletDecider, WalletState } from '../ledger/wallet/wallet.decider';

/**
 * Replays the log with the deciders' own evolve and compares the result with
 * the read models, row by row and column by column. Amounts are compared in
 * minor units, as the tables store them.
 *
 * Only what the projections have applied is compared: each projection's
 * events up to its own checkpoint. The checkpoints and the mutable rows
 * (wallets, holds, orders) are read in one short repeatable-read snapshot, so
 * they agree with each other however far the projections move meanwhile.
 * Statement lines are only ever inserted, so they are checked batch by batch
 * during the replay, outside that snapshot; holding a snapshot (and its table
 * locks) for the whole replay would block a rebuild's table swap, and every
 * request queued behind it, for as long.
 */

export type ReadModelTable = 'rm_wallets' | 'rm_wallet_holds' | 'rm_statement_lines' | 'rm_orders';
export type Cell = string | number | null;
export type Row = Record<string, Cell>;

export interface EventReference {
  stream: string;
  revision: number;
  type: string;
  position: string;
}

export interface Difference {
  table: ReadModelTable;
  key: Record<string, string | number>;
  /** null when the whole row is missing (actual null) or has no event behind it (expected null). */
  column: string | null;
  expected: Cell | Row;
  actual: Cell | Row;
  /** The last event that set the expected value; null for a row no event explains. */
  explained_by: EventReference | null;
}

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

export interface VerifyOptions {
  merchantId?: string;
  /** Called after each replayed batch with the events checked so far. */
  onProgress?: (events: number) => void;
}

export class WalletNotFoundError extends Error {
  constructor(readonly merchantId: string) {
    super(`No wallet for merchant ${merchantId}: no events and no read-model rows`);
    this.name = 'WalletNotFoundError';
  }
}

export const MAX_LISTED_DIFFERENCES = 1000;
const BATCH = 1000;
const TABLE_ORDER: readonly ReadModelTable[] = ['rm_wallets', 'rm_wallet_holds', 'rm_statement_lines', 'rm_orders'];

export async function verifyReadModels(pool: Pool, store: EventStore, options: VerifyOptions = {}): Promise<VerificationReport> {
  const merchantId = options.merchantId;
  const snapshot = await readSnapshot(pool, merchantId);
  const differences = new DifferenceList();
  const fold = new LedgerFold(snapshot.checkpoints);
  const checkLines = () => compareStatementLines(pool, fold.takeLines(), differences);

  if (merchantId === undefined) {
    const until = comparePositions(snapshot.checkpoints.orders, snapshot.checkpoints.wallets) > 0 ? snapshot.checkpoints.orders : snapshot.checkpoints.wallets;
    for (let after = START; ; ) {
      const batch = await store.readAll(after, BATCH);
      const relevant = batch.filter((e) => comparePositions(e.position, until) <= 0);
      for (const event of relevant) fold.apply(event);
      await checkLines();
      options.onProgress?.(fold.events);
      if (relevant.length < batch.length || batch.length === 0) break;
      after = batch[batch.length - 1].position;
    }
  } else {
    const wallet = await store.readStream(walletStream(merchantId));
    // The merchant's orders: those the read model lists, and those the wallet ever held money for.
    // (An order refused before any freeze whose row is missing as well is found by the whole-log check only.)
    const orderNos = new Set(snapshot.orders.keys());
    for (const event of wallet) if (typeof event.data.orderNo === 'string') orderNos.add(event.data.orderNo);
    if (wallet.length === 0 && orderNos.size === 0 && snapshot.wallets.size === 0 && snapshot.holds.size === 0) {
      throw new WalletNotFoundError(merchantId);
    }
    for (let i = 0; i < wallet.length; i += BATCH) {
      for (const event of wallet.slice(i, i + BATCH)) fold.apply(event);
      await checkLines();
      options.onProgress?.(fold.events);
    }
    const streams = [...orderNos];
    for (let i = 0; i < streams.length; i += 16) {
      const read = await Promise.all(streams.slice(i, i + 16).map((no) => store.readStream(orderStream(no))));
      // Another merchant's order (a read-model row under the wrong merchant) is not this merchant's to fold.
      for (const events of read) if (events[0]?.data.merchantId === merchantId) for (const event of events) fold.apply(event);
      options.onProgress?.(fold.events);
    }
  }

  compareWallets(fold, snapshot, differences);
  compareOrders(fold, snapshot, differences);
  await findStrayStatementLines(pool, fold, snapshot.checkpoints.wallets, merchantId, differences);
  const listed = differences.sorted();
  return {
    clean: differences.total === 0,
    merchant_id: merchantId ?? null,
    events_checked: fold.events,
    last_position: formatPosition(fold.last),
    projection_positions: { orders: formatPosition(snapshot.checkpoints.orders), wallets: formatPosition(snapshot.checkpoints.wallets) },
    differences: listed,
    differences_total: differences.total,
  };
}

// ---------------------------------------------------------------------------
// The fold: what the log says each row should be, and which event said it.

interface WalletFacts {
  state: WalletState;
  openedBy?: EventReference;
  /** The wallet's last event: the one the projection last wrote the row for. */
  lastBy?: EventReference;
  openedRevision: number;
  lastRevision: number;
  holdsBy: Map<string, EventReference>;
  closedBy: Map<string, EventReference>;
}

interface OrderFacts {
  state: OrderState;
  lastBy: EventReference;
  placedBy: EventReference;
  failBy?: EventReference;
  /** The projection writes fail_code on OrderDeliveryFailed and OrderFailed, not on a staff resolution. */
  failCodeWritten: boolean;
}

export interface ExpectedLine {
  merchantId: string;
  revision: number;
  row: Row;
  by: EventReference;
}

class LedgerFold {
  readonly wallets = new Map<string, WalletFacts>();
  readonly orders = new Map<string, OrderFacts>();
  events = 0;
  last: GlobalPosition = START;
  private lines: ExpectedLine[] = [];

  constructor(private readonly checkpoints: Checkpoints) {}

  apply(event: RecordedEvent): void {
    if (event.streamId.startsWith(WALLET_STREAM_PREFIX)) {
      if (comparePositions(event.position, this.checkpoints.wallets) > 0) return;
      this.applyWallet(event.streamId.slice(WALLET_STREAM_PREFIX.length), event);
    } else if (event.streamId.startsWith(ORDER_STREAM_PREFIX)) {
      if (comparePositions(event.position, this.checkpoints.orders) > 0) return;
      this.applyOrder(event.streamId.slice(ORDER_STREAM_PREFIX.length), event);
    } else {
      return;
    }
    this.events++;
    if (comparePositions(event.position, this.last) > 0) this.last = event.position;
  }

  takeLines(): ExpectedLine[] {
    return this.lines.splice(0);
  }

  private applyWallet(merchantId: string, recorded: RecordedEvent): void {
    const by = referenceOf(recorded);
    const facts: WalletFacts = this.wallets.get(merchantId) ?? {
      state: walletDecider.initialState(),
      openedRevision: -1,
      lastRevision: -1,
      holdsBy: new Map(),
      closedBy: new Map(),
    };
    this.wallets.set(merchantId, facts);
    const event = decodeEvent<WalletEvent>(recorded);
    facts.state = walletDecider.evolve(facts.state, event);
    facts.lastBy = by;
    facts.lastRevision = by.revision;
    if (event.type === 'WalletOpened') {
      facts.openedBy = by;
      facts.openedRevision = by.revision;
      return;
    }
    const orderNo = event.type === 'FundsDeposited' ? null : event.data.orderNo;
    if (event.type === 'FundsFrozen') facts.holdsBy.set(holdKey(event.data.orderNo, event.data.attempt), by);
    if (event.type === 'FrozenFundsDeducted' || event.type === 'FrozenFundsReleased') {
      const key = holdKey(event.data.orderNo, event.data.attempt);
      facts.holdsBy.delete(key);
      facts.closedBy.set(key, by);
    }
    const { balance, frozen } = facts.state;
    this.lines.push({
      merchantId,
      revision: by.revision,
      by,
      row: {
        entry_type: event.type,
        order_no: orderNo,
        amount: event.data.amount.toString(),
        balance_after: balance.toString(),
        frozen_after: frozen.toString(),
        available_after: (balance - frozen).toString(),
        position: by.position,
      },
    });
  }

  private applyOrder(orderNo: string, recorded: RecordedEvent): void {
    const by = referenceOf(recorded);
    const event = decodeEvent<OrderEvent>(recorded);
    const previous = this.orders.get(orderNo);
    const state = orderDecider.evolve(previous?.state ?? orderDecider.initialState(), event);
    const facts: OrderFacts = previous
      ? { ...previous, state, lastBy: by }
      : { state, lastBy: by, placedBy: by, failCodeWritten: false };
    if (event.type === 'OrderPlaced') Object.assign(facts, { placedBy: by, failBy: undefined, failCodeWritten: false });
    if (event.type === 'OrderDeliveryFailed' || event.type === 'OrderFailed') Object.assign(facts, { failBy: by, failCodeWritten: true });
    if (event.type === 'OrderResolved' && event.data.outcome === 'failed') Object.assign(facts, { failBy: by, failCodeWritten: false });
    this.orders.set(orderNo, facts);
  }
}

function referenceOf(event: RecordedEvent): EventReference {
  return { stream: event.streamId, revision: Number(event.revision), type: event.type, position: formatPosition(event.position) };
}

// ---------------------------------------------------------------------------
// The tables.

interface Checkpoints {
  orders: GlobalPosition;
  wallets: GlobalPosition;
}

interface Snapshot {
  checkpoints: Checkpoints;
  wallets: Map<string, Row>;
  holds: Map<string, Row & { merchant_id: string; order_no: string; attempt: number }>;
  orders: Map<string, Row>;
}

async function readSnapshot(pool: Pool, merchantId: string | undefined): Promise<Snapshot> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const { rows: marks } = await client.query<{ name: string; c: string; p: string }>(
      `select name, position_commit::text as c, position_prepare::text as p from projection_checkpoints where name in ('orders', 'wallets')`,
    );
    const mark = (name: string) => {
      const row = marks.find((m) => m.name === name);
      return row ? { commit: BigInt(row.c), prepare: BigInt(row.p) } : START;
    };
    const scope = merchantId === undefined ? '' : 'where merchant_id = $1';
    const params = merchantId === undefined ? [] : [merchantId];
    const wallets = await client.query<Row & { merchant_id: string }>(
      `select merchant_id, balance::text, frozen::text, available::text from rm_wallets ${scope}`,
      params,
    );
    const holds = await client.query<Row & { merchant_id: string; order_no: string; attempt: number }>(
      `select merchant_id, order_no, attempt, amount::text from rm_wallet_holds ${scope}`,
      params,
    );
    const orders = await client.query<Row & { order_no: string }>(
      `select order_no, merchant_id, stage, attempt, amount::text, fail_code from rm_orders ${scope}`,
      params,
    );
    await client.query('commit');
    return {
      checkpoints: { orders: mark('orders'), wallets: mark('wallets') },
      wallets: new Map(wallets.rows.map((r) => [r.merchant_id, r])),
      holds: new Map(holds.rows.map((r) => [`${r.merchant_id}|${holdKey(r.order_no, r.attempt)}`, r])),
      orders: new Map(orders.rows.map((r) => [r.order_no, r])),
    };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function compareWallets(fold: LedgerFold, snapshot: Snapshot, out: DifferenceList): void {
  for (const [merchantId, facts] of fold.wallets) {
    const { balance, frozen } = facts.state;
    const expected = { balance: balance.toString(), frozen: frozen.toString(), available: (balance - frozen).toString() };
    out.compareRow('rm_wallets', { merchant_id: merchantId }, expected, snapshot.wallets.get(merchantId), facts.lastBy!, facts.openedBy ?? facts.lastBy!);
    snapshot.wallets.delete(merchantId);

    for (const [key, by] of facts.holdsBy) {
      const [orderNo, attempt] = splitHoldKey(key);
      const rowKey = `${merchantId}|${key}`;
      const amount = facts.state.holds.get(key)!.toString();
      out.compareRow('rm_wallet_holds', { merchant_id: merchantId, order_no: orderNo, attempt }, { amount }, snapshot.holds.get(rowKey), by, by);
      snapshot.holds.delete(rowKey);
    }
  }
  for (const [merchantId, row] of snapshot.wallets) out.stray('rm_wallets', { merchant_id: merchantId }, without(row, 'merchant_id'), null);
  for (const [rowKey, row] of snapshot.holds) {
    const closedBy = fold.wallets.get(row.merchant_id)?.closedBy.get(rowKey.slice(row.merchant_id.length + 1)) ?? null;
    out.stray('rm_wallet_holds', { merchant_id: row.merchant_id, order_no: row.order_no, attempt: row.attempt }, { amount: row.amount }, closedBy);
  }
}

function compareOrders(fold: LedgerFold, snapshot: Snapshot, out: DifferenceList): void {
  for (const [orderNo, facts] of fold.orders) {
    const placed = facts.state.order!;
    const failCode = facts.failCodeWritten ? (facts.state.failCode ?? null) : null;
    const expected: Row = {
      merchant_id: placed.merchantId,
      stage: facts.state.stage,
      attempt: placed.attempt,
      amount: placed.amount.toString(),
      fail_code: failCode,
    };
    const explainers: Record<string, EventReference> = {
      merchant_id: facts.placedBy,
      attempt: facts.placedBy,
      amount: facts.placedBy,
      stage: facts.lastBy,
      fail_code: facts.failBy ?? facts.lastBy,
    };
    out.compareRow('rm_orders', { order_no: orderNo }, expected, snapshot.orders.get(orderNo), explainers, facts.placedBy);
    snapshot.orders.delete(orderNo);
  }
  for (const [orderNo, row] of snapshot.orders) out.stray('rm_orders', { order_no: orderNo }, without(row, 'order_no'), null);
}

async function compareStatementLines(pool: Pool, lines: ExpectedLine[], out: DifferenceList): Promise<void> {
  if (lines.length === 0) return;
  const { rows } = await pool.query<Row & { merchant_id: string; revision: string }>(
    `select l.merchant_id, l.revision::text, l.entry_type, l.order_no, l.amount::text, l.balance_after::text,
       l.frozen_after::text, l.available_after::text, l.position_commit || '/' || l.position_prepare as position
     from rm_statement_lines l
     join unnest($1::text[], $2::bigint[]) as k(merchant_id, revision) using (merchant_id, revision)`,
    [lines.map((l) => l.merchantId), lines.map((l) => l.revision)],
  );
  const actual = new Map(rows.map((r) => [`${r.merchant_id}|${r.revision}`, r]));
  for (const line of lines) {
    const row = actual.get(`${line.merchantId}|${line.revision}`);
    out.compareRow('rm_statement_lines', { merchant_id: line.merchantId, revision: line.revision }, line.row, row, line.by, line.by);
  }
}

/** Lines up to the checkpoint that no replayed event accounts for. */
async function findStrayStatementLines(
  pool: Pool,
  fold: LedgerFold,
  checkpoint: GlobalPosition,
  merchantId: string | undefined,
  out: DifferenceList,
): Promise<void> {
  const wallets = [...fold.wallets];
  const { rows } = await pool.query<Row & { merchant_id: string; revision: string }>(
    `select l.merchant_id, l.revision::text, l.entry_type, l.order_no, l.amount::text, l.balance_after::text,
       l.frozen_after::text, l.available_after::text, l.position_commit || '/' || l.position_prepare as position
     from rm_statement_lines l
     left join unnest($1::text[], $2::bigint[], $3::bigint[]) as w(merchant_id, opened, last) using (merchant_id)
     where (l.position_commit, l.position_prepare) <= ($4::bigint, $5::bigint)
       and (w.merchant_id is null or l.revision <= w.opened or l.revision > w.last)
       and ($6::text is null or l.merchant_id = $6)
     order by l.merchant_id, l.revision`,
    [
      wallets.map(([id]) => id),
      wallets.map(([, f]) => f.openedRevision),
      wallets.map(([, f]) => f.lastRevision),
      checkpoint.commit.toString(),
      checkpoint.prepare.toString(),
      merchantId ?? null,
    ],
  );
  for (const row of rows) {
    out.stray('rm_statement_lines', { merchant_id: row.merchant_id, revision: Number(row.revision) }, without(row, 'merchant_id', 'revision'), null);
  }
}

// ---------------------------------------------------------------------------
// Collecting differences: bounded, so a wholly wrong table cannot exhaust memory.

class DifferenceList {
  total = 0;
  private readonly listed: Difference[] = [];

  add(difference: Difference): void {
    this.total++;
    if (this.listed.length < MAX_LISTED_DIFFERENCES) this.listed.push(difference);
  }

  /**
   * Column by column; a missing row is one difference. `explainedBy` names
   * the event behind each column (one for all, or per column); `createdBy`
   * the event that should have created a missing row.
   */
  compareRow(
    table: ReadModelTable,
    key: Difference['key'],
    expected: Row,
    actual: Row | undefined,
    explainedBy: EventReference | Record<string, EventReference>,
    createdBy: EventReference,
  ): void {
    if (!actual) {
      this.add({ table, key, column: null, expected, actual: null, explained_by: createdBy });
      return;
    }
    for (const [column, value] of Object.entries(expected)) {
      const found = actual[column] ?? null;
      if (String(found) === String(value) && (found === null) === (value === null)) continue;
      const by = 'stream' in explainedBy ? (explainedBy as EventReference) : (explainedBy as Record<string, EventReference>)[column];
      this.add({ table, key, column, expected: value, actual: found, explained_by: by });
    }
  }

  stray(table: ReadModelTable, key: Difference['key'], actual: Row, explainedBy: EventReference | null): void {
    this.add({ table, key, column: null, expected: null, actual, explained_by: explainedBy });
  }

  sorted(): Difference[] {
    const rank = (d: Difference) => TABLE_ORDER.indexOf(d.table);
    return [...this.listed].sort((a, b) => rank(a) - rank(b) || JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)));
  }
}

function splitHoldKey(key: string): [string, number] {
  const at = key.lastIndexOf('#');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}

function without(row: Row, ...columns: string[]): Row {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !columns.includes(column)));
}
