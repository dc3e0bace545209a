import { Pool } from 'pg';
import { GlobalPosition, START } from '../../ledger/ports/event-store.port';
import { WALLET_STREAM_PREFIX } from '../../ledger/streams';
import { holdKey } from '../../ledger/wallet/wallet.decider';
import { Row } from './differences';
import type { Checkpoints, SnapshotEventFacts, WalletFacts } from './ledger-fold';
import { inOneSnapshot } from '../../infrastructure/postgres/transactions';
import { differingOrderRows, finalOrderCounts, openOrderRows, orderRowsOf } from '../../../projections/orders.queries';

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
  /** By `merchant|order#attempt`. */
  holds: Map<string, HoldRow>;
  /** Orders not final: by order_no. */
  pendingOrders: Map<string, Row & { order_no: string }>;
  /** Final (succeeded or failed) order rows per merchant. */
  finalOrders: Map<string, number>;
}

/** `withOrders` false: the wallet's rows alone (one wallet's verification compares no order rows). */
export async function readTablesAtCheckpoints(pool: Pool, merchantId: string | undefined, withOrders = true): Promise<TablesAtCheckpoints> {
  return inOneSnapshot(pool, async (client) => {
    const { rows: marks } = await client.query<{ name: string; c: string; p: string }>(
      `select name, position_commit::text as c, position_prepare::text as p from projection_checkpoints where name in ('orders', 'wallets')`,
    );
    const mark = (name: string) => {
      const row = marks.find((m) => m.name === name);
      return row ? { commit: BigInt(row.c), prepare: BigInt(row.p) } : START;
    };
    const scope = merchantId === undefined ? '' : 'merchant_id = $1';
    const where = (...conditions: string[]) => {
      const all = [scope, ...conditions].filter(Boolean);
      return all.length > 0 ? `where ${all.join(' and ')}` : '';
    };
    const params = merchantId === undefined ? [] : [merchantId];
    const wallets = await client.query<Row & { merchant_id: string }>(
      `select merchant_id, balance::text, frozen::text, available::text from rm_wallets ${where()}`,
      params,
    );
    const holds = await client.query<HoldRow>(`select merchant_id, order_no, attempt, amount::text from rm_wallet_holds ${where()}`, params);
    const pending = withOrders ? await openOrderRows(client, merchantId) : [];
    const final = withOrders ? await finalOrderCounts(client, merchantId) : [];
    return {
      checkpoints: { orders: mark('orders'), wallets: mark('wallets') },
      wallets: new Map(wallets.rows.map((r) => [r.merchant_id, r])),
      holds: new Map(holds.rows.map((r) => [`${r.merchant_id}|${holdKey(r.order_no, r.attempt)}`, r])),
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

const rangeParams = (ranges: WalletRanges) => [[...ranges.keys()], [...ranges.values()].map((r) => r.first), [...ranges.values()].map((r) => r.last)];

// One index range scan per wallet: "offset 0" keeps the planner from flattening the
// subquery into a join, which it would run as a scan of the whole table.
const inRanges = (table: string) =>
  `from unnest($1::text[], $2::bigint[], $3::bigint[]) as r(merchant_id, first, last)
   cross join lateral (select * from ${table} t where t.merchant_id = r.merchant_id and t.revision between r.first and r.last offset 0) x`;

type KeyedRow = Row & { merchant_id: string; revision: string };

const byKey = (rows: KeyedRow[]) =>
  new Map(rows.map(({ merchant_id, revision, ...row }) => [walletRowKey({ merchantId: merchant_id, revision: Number(revision) }), row as Row]));

/** Each wallet's lineDigest over its statement lines in the ranges, computed by Postgres with lineDigestText's formula. */
export async function lineDigests(pool: Pool, ranges: WalletRanges): Promise<Map<string, string>> {
  if (ranges.size === 0) return new Map();
  const { rows } = await pool.query<{ merchant_id: string; digest: string }>({
    name: 'verify-line-digests',
    // The lines' texts in an ARRAY(... order by): an index walk in revision order. (string_agg's own
    // order by sorted every wallet's lines again, half of the query's time.)
    text: `select r.merchant_id, md5(array_to_string(array(
         select concat_ws('|', x.revision, x.entry_type, coalesce(x.order_no, '\\N'), x.amount, x.balance_after, x.frozen_after, x.available_after,
           x.position_commit || '/' || x.position_prepare)
         from rm_statement_lines x where x.merchant_id = r.merchant_id and x.revision between r.first and r.last order by x.revision
       ), E'\\n')) as digest
     from unnest($1::text[], $2::bigint[], $3::bigint[]) as r(merchant_id, first, last)`,
    values: rangeParams(ranges),
  });
  return new Map(rows.map((r) => [r.merchant_id, r.digest]));
}

export async function linesIn(pool: Pool, ranges: WalletRanges): Promise<Map<string, Row>> {
  if (ranges.size === 0) return new Map();
  const { rows } = await pool.query<KeyedRow>(
    `select x.merchant_id, x.revision::text, x.entry_type, x.order_no, x.amount::text, x.balance_after::text, x.frozen_after::text,
       x.available_after::text, x.position_commit || '/' || x.position_prepare as position ${inRanges('rm_statement_lines')}`,
    rangeParams(ranges),
  );
  return byKey(rows);
}

/** A time as isoTimestamp writes it (to_char rounds its milliseconds: `time` must hold whole ones). */
const isoTimestampText = (time: string) => `to_char(${time} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;
const recordedAtText = (alias: string) => isoTimestampText(`${alias}.recorded_at`);

/** A snapshot to compare: the row the read model lists (undefined: none), and what its event in the log says. */
export interface SnapshotToCheck {
  row: Row | undefined;
  event: SnapshotEventFacts;
}

/**
 * The snapshots to compare in each wallet's range of revisions: those the
 * read model lists there, and those due there (every `interval` events, at
 * an event that has a hash) whether listed or not; by wallet, then revision.
 * With each, its event's time and hash from the log: the replay reads
 * neither, and only the snapshots need them.
 */
export async function snapshotsToCheck(pool: Pool, ranges: WalletRanges, interval: number): Promise<Map<string, Map<number, SnapshotToCheck>>> {
  const byWallet = new Map<string, Map<number, SnapshotToCheck>>();
  if (ranges.size === 0) return byWallet;
  const due: [string[], number[]] = [[], []];
  for (const [merchantId, { first, last }] of ranges) {
    for (let revision = first + ((interval - 1 - (first % interval)) % interval); revision <= last; revision += interval) {
      due[0].push(merchantId);
      due[1].push(revision);
    }
  }
  const { rows } = await pool.query<{
    merchant_id: string;
    revision: string;
    listed: boolean;
    position: string;
    recorded_at: string;
    event_hash: string;
    balance: string;
    frozen: string;
    event_recorded_at: string;
    event_hash_logged: string | null;
  }>({
    name: 'verify-snapshots-to-check',
    // Lateral look-ups by key ("offset 0" keeps each one): joined otherwise, the planner may walk all of es_events.
    text: `with k(merchant_id, revision) as (
       select r.merchant_id, x.revision from unnest($1::text[], $2::bigint[], $3::bigint[]) as r(merchant_id, first, last)
       cross join lateral (select x.revision from rm_wallet_snapshots x where x.merchant_id = r.merchant_id and x.revision between r.first and r.last offset 0) x
       union
       select * from unnest($4::text[], $5::bigint[])
     )
     select k.merchant_id, k.revision::text, s.revision is not null as listed,
       s.position_commit || '/' || s.position_prepare as position, ${recordedAtText('s')} as recorded_at, s.event_hash, s.balance::text, s.frozen::text,
       ${isoTimestampText("date_trunc('milliseconds', e.created_at)")} as event_recorded_at, e.hash as event_hash_logged
     from k
     left join lateral (select * from rm_wallet_snapshots s where s.merchant_id = k.merchant_id and s.revision = k.revision offset 0) s on true
     left join lateral (
       select e.created_at, case when jsonb_typeof(e.metadata->'hash') = 'string' then e.metadata->>'hash' end as hash
       from es_events e where e.stream_id = $6::text || k.merchant_id and e.stream_revision = k.revision offset 0
     ) e on true
     where s.revision is not null or e.hash is not null`,
    values: [...rangeParams(ranges), ...due, WALLET_STREAM_PREFIX],
  });
  for (const r of rows) {
    const ofWallet = byWallet.get(r.merchant_id) ?? new Map<number, SnapshotToCheck>();
    byWallet.set(r.merchant_id, ofWallet);
    const row = r.listed ? { position: r.position, recorded_at: r.recorded_at, event_hash: r.event_hash, balance: r.balance, frozen: r.frozen } : undefined;
    ofWallet.set(Number(r.revision), { row, event: { recordedAt: r.event_recorded_at, eventHash: r.event_hash_logged } });
  }
  return byWallet;
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
  const facts = [...wallets];
  const params: unknown[] = [
    facts.map(([id]) => id),
    facts.map(([, f]) => f.openedRevision),
    facts.map(([, f]) => Number(f.revision)),
    checkpoint.commit.toString(),
    checkpoint.prepare.toString(),
    merchantId ?? null,
  ];
  const replayed = `left join unnest($1::text[], $2::bigint[], $3::bigint[]) as w(merchant_id, opened, last) using (merchant_id)`;
  const inScope = `(x.position_commit, x.position_prepare) <= ($4::bigint, $5::bigint) and ($6::text is null or x.merchant_id = $6)`;
  // One replayed wallet: its bounds again, compared with the row's own
  // columns, so that Postgres reads the two ends of the wallet's index
  // instead of every row of it.
  const one = merchantId === undefined ? undefined : wallets.get(merchantId);
  if (one) params.push(one.openedRevision, Number(one.revision));
  const outside = (opened: '<' | '<=') => (one ? `and (x.revision ${opened} $7::bigint or x.revision > $8::bigint)` : '');
  const lines = await pool.query<Row & { merchant_id: string; revision: string }>(
    `select x.merchant_id, x.revision::text, x.entry_type, x.order_no, x.amount::text, x.balance_after::text,
       x.frozen_after::text, x.available_after::text, x.position_commit || '/' || x.position_prepare as position
     from rm_statement_lines x ${replayed}
     where ${inScope} and (w.merchant_id is null or x.revision <= w.opened or x.revision > w.last) ${outside('<=')}
     order by x.merchant_id, x.revision`,
    params,
  );
  const snapshots = await pool.query<Row & { merchant_id: string; revision: string }>(
    `select x.merchant_id, x.revision::text, x.position_commit || '/' || x.position_prepare as position,
       ${recordedAtText('x')} as recorded_at, x.event_hash, x.balance::text, x.frozen::text
     from rm_wallet_snapshots x ${replayed}
     where ${inScope} and (w.merchant_id is null or x.revision < w.opened or x.revision > w.last) ${outside('<')}
     order by x.merchant_id, x.revision`,
    params,
  );
  const stray =
    (table: StrayWalletRow['table']) =>
    (r: Row & { merchant_id: string; revision: string }): StrayWalletRow => {
      const { merchant_id: id, revision, ...row } = r;
      return { table, merchantId: id, revision: Number(revision), row };
    };
  return [...lines.rows.map(stray('rm_statement_lines')), ...snapshots.rows.map(stray('rm_wallet_snapshots'))];
}
