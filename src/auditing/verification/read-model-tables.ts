import { Pool } from 'pg';
import { EventStore, GlobalPosition, ReplayedEvent, START } from '../../ledger/ports/event-store.port';
import { walletStream } from '../../ledger/streams';
import { isoTimestamp } from '../../shared/clock';
import { holdKey, merchantHoldKey } from '../../ledger/wallet/wallet.decider';
import { Row } from './differences';
import type { Checkpoints, SnapshotEventFacts, WalletFacts } from './ledger-fold';
import { inOneSnapshot } from '../../infrastructure/postgres/transactions';
import { checkpointRows } from '../../../projections/checkpoints';
import { differingOrderRows, finalOrderCounts, openOrderRows, orderRowsOf } from '../../../projections/orders.queries';
import {
  holdRows,
  lineDigestRows,
  snapshotCheckRows,
  statementLineRows,
  unaccountedWalletRows,
  WalletKeyedRow,
  walletRows,
} from '../../../projections/wallets.queries';

export { finalOrderRowsOf, orderNosOf } from '../../../projections/orders.queries';

export type HoldRow = Row & { merchant_id: string; order_no: string; attempt: number };

/**
 * What the verification reads in one short repeatable-read snapshot, so the
 * checkpoints and these rows agree with each other however far the
 * projections move meanwhile: the rows that may still change (wallets,
 * holds, orders not yet final) and how many final orders each merchant has.
 * Rows that never change again (statement lines, snapshots, final orders)
 * are looked up batch by batch during the replay instead; holding a snapshot
 * open for the whole replay would block a rebuild's table swap, and every
 * request queued behind it, for as long.
 */
export interface TablesAtCheckpoints {
  checkpoints: Checkpoints;
  wallets: Map<string, Row & { merchant_id: string }>;
  /** By merchantHoldKey. */
  holds: Map<string, HoldRow>;
  /** Orders not final: by order_no. */
  pendingOrders: Map<string, Row & { order_no: string }>;
  /** Final (succeeded or failed) order rows per merchant. */
  finalOrders: Map<string, number>;
}

/** `withOrders` false: the wallet's rows alone (one wallet's verification compares no order rows). */
export async function readTablesAtCheckpoints(pool: Pool, merchantId: string | undefined, withOrders = true): Promise<TablesAtCheckpoints> {
  return inOneSnapshot(pool, async (client) => {
    const marks = await checkpointRows(client, ['orders', 'wallets']);
    const mark = (name: string) => {
      const row = marks.find((m) => m.name === name);
      return row ? { commit: BigInt(row.c), prepare: BigInt(row.p) } : START;
    };
    const wallets = await walletRows(client, merchantId);
    const holds = await holdRows(client, merchantId);
    const pending = withOrders ? await openOrderRows(client, merchantId) : [];
    const final = withOrders ? await finalOrderCounts(client, merchantId) : [];
    return {
      checkpoints: { orders: mark('orders'), wallets: mark('wallets') },
      wallets: new Map(wallets.map((r) => [r.merchant_id, r])),
      holds: new Map(holds.map((r) => [merchantHoldKey(r.merchant_id, holdKey(r.order_no, r.attempt)), r])),
      pendingOrders: new Map(pending.map((r) => [r.order_no, r])),
      finalOrders: new Map(final.map((r) => [r.merchant_id, Number(r.n)])),
    };
  });
}

export interface WalletRowKey {
  merchantId: string;
  revision: number;
}

export const walletRowKey = (key: WalletRowKey) => `${key.merchantId}|${key.revision}`;

/** Each wallet's revisions among some keys, first to last. */
export type WalletRanges = Map<string, { first: number; last: number }>;

/**
 * The revisions of one wallet within a batch of the log, or a slice of its
 * stream, are consecutive: each wallet's rows are read as one index range.
 */
export function walletRanges(keys: readonly WalletRowKey[]): WalletRanges {
  const ranges: WalletRanges = new Map();
  for (const { merchantId, revision } of keys) {
    const range = ranges.get(merchantId);
    if (!range) ranges.set(merchantId, { first: revision, last: revision });
    else {
      range.first = Math.min(range.first, revision);
      range.last = Math.max(range.last, revision);
    }
  }
  return ranges;
}

const byKey = (rows: WalletKeyedRow[]) =>
  new Map(rows.map(({ merchant_id, revision, ...row }) => [walletRowKey({ merchantId: merchant_id, revision: Number(revision) }), row as Row]));

/** Each wallet's lineDigest over its statement lines in the ranges, computed by Postgres with lineDigestText's formula. */
export async function lineDigests(pool: Pool, ranges: WalletRanges): Promise<Map<string, string>> {
  if (ranges.size === 0) return new Map();
  return new Map((await lineDigestRows(pool, ranges)).map((r) => [r.merchant_id, r.digest]));
}

export async function linesIn(pool: Pool, ranges: WalletRanges): Promise<Map<string, Row>> {
  if (ranges.size === 0) return new Map();
  return byKey(await statementLineRows(pool, ranges));
}

/** A snapshot to compare: the row the read model lists (undefined: none), and what its event in the log says. */
export interface SnapshotToCheck {
  row: Row | undefined;
  event: SnapshotEventFacts;
}

/**
 * The snapshots to compare in each wallet's range of revisions: those the
 * read model lists there, and those due there (every `interval` events, at
 * an event that has a hash) whether listed or not; by wallet, then revision.
 * With each, its event's time and hash, read through the event store: the
 * replay reads neither, and only the snapshots need them. The listed rows
 * and the due events are read at once; an event of a snapshot listed off
 * the interval is read after.
 */
export async function snapshotsToCheck(
  pool: Pool,
  store: EventStore,
  ranges: WalletRanges,
  interval: number,
): Promise<Map<string, Map<number, SnapshotToCheck>>> {
  const byWallet = new Map<string, Map<number, SnapshotToCheck>>();
  if (ranges.size === 0) return byWallet;
  const due: WalletRowKey[] = [];
  for (const [merchantId, { first, last }] of ranges) {
    for (let revision = first + ((interval - 1 - (first % interval)) % interval); revision <= last; revision += interval) due.push({ merchantId, revision });
  }
  const [listed, dueEvents] = await Promise.all([snapshotCheckRows(pool, ranges), eventsAt(store, due)]);
  const listedRows = new Map(listed.map(({ merchant_id, revision, ...row }) => [walletRowKey({ merchantId: merchant_id, revision: Number(revision) }), row]));
  const offInterval = listed.map((r) => ({ merchantId: r.merchant_id, revision: Number(r.revision) })).filter((key) => !dueEvents.has(walletRowKey(key)));
  const events = new Map([...dueEvents, ...(await eventsAt(store, offInterval))]);
  const keys = [...new Map([...due, ...offInterval].map((key) => [walletRowKey(key), key])).values()];
  keys.sort((a, b) => (a.merchantId === b.merchantId ? a.revision - b.revision : a.merchantId < b.merchantId ? -1 : 1));
  for (const key of keys) {
    const row = listedRows.get(walletRowKey(key));
    const event = events.get(walletRowKey(key));
    const eventHash = typeof event?.metadata.hash === 'string' ? event.metadata.hash : null;
    // A due revision whose event has no hash (or no event) has no snapshot to check, unless one is listed.
    if (!row && eventHash === null) continue;
    const ofWallet = byWallet.get(key.merchantId) ?? new Map<number, SnapshotToCheck>();
    byWallet.set(key.merchantId, ofWallet);
    ofWallet.set(key.revision, { row, event: { recordedAt: event ? isoTimestamp(event.createdAt) : null, eventHash } });
  }
  return byWallet;
}

/** The wallets' events at these revisions, by walletRowKey; a revision the log lacks has none. */
async function eventsAt(store: EventStore, keys: readonly WalletRowKey[]): Promise<Map<string, ReplayedEvent>> {
  if (keys.length === 0) return new Map();
  const events = await store.readEventsAt(keys.map((k) => ({ streamId: walletStream(k.merchantId), revision: BigInt(k.revision) })));
  const found = new Map<string, ReplayedEvent>();
  keys.forEach((key, i) => {
    const event = events[i];
    if (event) found.set(walletRowKey(key), event);
  });
  return found;
}

/** The rows of these orders that are not as expected, compared by Postgres (undefined: no row at all). */
export async function differingOrders(
  pool: Pool,
  expected: readonly { orderNo: string; row: Row }[],
): Promise<Map<string, (Row & { order_no: string }) | undefined>> {
  const differing = new Map<string, (Row & { order_no: string }) | undefined>();
  if (expected.length === 0) return differing;
  for (const { expected_no, found, ...row } of await differingOrderRows(pool, expected)) differing.set(expected_no, found ? row : undefined);
  return differing;
}

/** The current rows of these orders. */
export async function orderRows(pool: Pool, orderNos: readonly string[]): Promise<Map<string, Row & { order_no: string }>> {
  if (orderNos.length === 0) return new Map();
  return new Map((await orderRowsOf(pool, orderNos)).map((r) => [r.order_no, r]));
}

export interface StrayWalletRow {
  table: 'rm_statement_lines' | 'rm_wallet_snapshots';
  merchantId: string;
  revision: number;
  row: Row;
}

/**
 * Statement lines and snapshots up to the checkpoint that no replayed event
 * accounts for: of wallets the log does not have, or outside the revisions
 * replayed (a line at or before WalletOpened, either after the last event).
 */
export async function strayWalletRows(
  pool: Pool,
  wallets: ReadonlyMap<string, WalletFacts>,
  checkpoint: GlobalPosition,
  merchantId: string | undefined,
): Promise<StrayWalletRow[]> {
  const { lines, snapshots } = await unaccountedWalletRows(pool, wallets, checkpoint, merchantId);
  const stray =
    (table: StrayWalletRow['table']) =>
    (r: WalletKeyedRow): StrayWalletRow => {
      const { merchant_id: id, revision, ...row } = r;
      return { table, merchantId: id, revision: Number(revision), row };
    };
  return [...lines.map(stray('rm_statement_lines')), ...snapshots.map(stray('rm_wallet_snapshots'))];
}
