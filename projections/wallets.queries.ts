import { Pool, PoolClient } from 'pg';
import type { GlobalPosition } from '../src/ledger/ports/event-store.port';

/**
 * Every read of the wallets read model (rm_wallets, rm_wallet_holds,
 * rm_statement_lines, rm_wallet_snapshots) outside the projection that
 * writes it: the balance endpoint, the audits' snapshots, the start-up
 * warm-up, the process manager's stray holds, the low balances the
 * operations dashboard and the metrics report, an order's adjustments, and
 * the verification's rows.
 */

/** A wallet's amounts and the revision they are as of, as text (undefined: the projection has not seen the wallet). */
export async function walletAmountsRow(pool: Pool, merchantId: string): Promise<{ balance: string; frozen: string; revision: string } | undefined> {
  const { rows } = await pool.query<{ balance: string; frozen: string; revision: string }>(
    'select balance::text, frozen::text, revision::text from rm_wallets where merchant_id = $1',
    [merchantId],
  );
  return rows[0];
}

/** Where the adjustments that name an order are in its wallet's stream (the wallet's revisions), first to last. */
export async function adjustmentRevisionsOfOrder(pool: Pool, merchantId: string, orderNo: string): Promise<bigint[]> {
  const { rows } = await pool.query<{ revision: string }>(
    `select revision::text from rm_statement_lines where order_no = $1 and entry_type = 'WalletAdjusted' and merchant_id = $2 order by revision`,
    [orderNo, merchantId],
  );
  return rows.map((row) => BigInt(row.revision));
}

/** The wallets worth loading at start-up: written in the last week, the longest first. */
export async function longestActiveWallets(pool: Pool, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ merchant_id: string }>(
    `select merchant_id from rm_wallets where updated_at > now() - interval '7 days'
       order by revision desc, merchant_id limit $1`,
    [limit],
  );
  return rows.map((row) => row.merchant_id);
}

/** Every wallet the read model knows, by merchant; none on a database whose read models are not created yet. */
export async function allWalletMerchants(pool: Pool): Promise<string[]> {
  const { rows: exists } = await pool.query<{ present: boolean }>(`select to_regclass('rm_wallets') is not null as present`);
  if (!exists[0].present) return [];
  const { rows } = await pool.query<{ merchant_id: string }>('select merchant_id from rm_wallets order by merchant_id');
  return rows.map((row) => row.merchant_id);
}

/**
 * Holds older than the grace period whose order does not hold them (no
 * order, another attempt, or an order placed or refused), from the holds and
 * the orders read model in one statement.
 */
export async function strayHoldRows(pool: Pool, graceMs: number, limit: number): Promise<{ merchant_id: string; order_no: string; attempt: number }[]> {
  const { rows } = await pool.query<{ merchant_id: string; order_no: string; attempt: number }>(
    `select h.merchant_id, h.order_no, h.attempt from rm_wallet_holds h
       left join rm_orders o on o.order_no = h.order_no
       where (o.order_no is null or o.attempt <> h.attempt or o.stage in ('placed', 'refused'))
         and h.frozen_at < now() - make_interval(secs => $1::float8 / 1000)
       limit $2`,
    [graceMs, limit],
  );
  return rows;
}

// ---------------------------------------------------------------------------
// Low balances: the wallets of merchants with a low-balance threshold (merchants.low_balance_threshold, minor units).

export interface LowBalanceRow {
  merchant_id: string;
  name: string;
  currency: string;
  /** Minor units, as text. */
  available: string;
  threshold: string;
}

/**
 * The merchants whose available balance is under their threshold, the
 * furthest under it (in proportion) first, at most `limit`, and how many
 * there are in all. Only the merchants with a threshold are read, each
 * wallet by its key.
 */
export async function lowBalanceMerchants(pool: Pool, limit: number): Promise<{ total: number; rows: LowBalanceRow[] }> {
  const { rows } = await pool.query<LowBalanceRow & { total: number }>(
    `select m.merchant_id, m.name, m.currency, w.available::text as available, m.low_balance_threshold::text as threshold, count(*) over ()::int as total
     from merchants m join rm_wallets w using (merchant_id)
     where m.low_balance_threshold is not null and w.available < m.low_balance_threshold
     order by w.available::numeric / m.low_balance_threshold, m.merchant_id
     limit $1`,
    [limit],
  );
  return { total: rows[0]?.total ?? 0, rows: rows.map(({ total: _total, ...row }) => row) };
}

/** Every merchant with a threshold and an open wallet, and whether its available balance is under the threshold: the gauge's samples. */
export async function lowBalanceFlags(pool: Pool): Promise<{ merchant_id: string; low: boolean }[]> {
  const { rows } = await pool.query<{ merchant_id: string; low: boolean }>(
    `select m.merchant_id, w.available < m.low_balance_threshold as low
     from merchants m join rm_wallets w using (merchant_id) where m.low_balance_threshold is not null`,
  );
  return rows;
}

// ---------------------------------------------------------------------------
// Snapshots.

/**
 * Where a replay may start: the latest snapshot whose event meets any one of
 * these (no bound at all: the latest snapshot).
 */
export interface SnapshotBound {
  revisionAtMost?: bigint;
  recordedBefore?: Date;
  recordedAtMost?: Date;
  positionAtMost?: GlobalPosition;
}

/** The latest snapshot of the wallet within the bound, numbers as text (undefined: none). */
export async function latestSnapshotRow(
  pool: Pool,
  merchantId: string,
  bound: SnapshotBound,
): Promise<{ r: string; c: string; p: string; recorded_at: Date; event_hash: string; b: string; f: string } | undefined> {
  const params: unknown[] = [merchantId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const any: string[] = [];
  if (bound.revisionAtMost !== undefined) any.push(`revision <= ${param(bound.revisionAtMost.toString())}`);
  if (bound.recordedBefore) any.push(`recorded_at < ${param(bound.recordedBefore)}`);
  if (bound.recordedAtMost) any.push(`recorded_at <= ${param(bound.recordedAtMost)}`);
  if (bound.positionAtMost) {
    any.push(`(position_commit, position_prepare) <= (${param(bound.positionAtMost.commit.toString())}, ${param(bound.positionAtMost.prepare.toString())})`);
  }
  const { rows } = await pool.query<{ r: string; c: string; p: string; recorded_at: Date; event_hash: string; b: string; f: string }>(
    `select revision::text as r, position_commit::text as c, position_prepare::text as p, recorded_at, event_hash, balance::text as b, frozen::text as f
       from rm_wallet_snapshots where merchant_id = $1 ${any.length > 0 ? `and (${any.join(' or ')})` : ''}
       order by revision desc limit 1`,
    params,
  );
  return rows[0];
}

// ---------------------------------------------------------------------------
// The verification: the columns it compares, as text.

type Cells = Record<string, string | number | null>;

/** A statement line's or snapshot's compared columns, with its wallet and revision. */
export type WalletKeyedRow = Cells & { merchant_id: string; revision: string };

/** `where` with the merchant's scope ($1) when there is one. */
const scoped = (merchantId: string | undefined) => (merchantId === undefined ? '' : 'where merchant_id = $1');

/** The wallets' rows (of one merchant, or all), on the snapshot's connection. */
export async function walletRows(client: PoolClient, merchantId: string | undefined): Promise<(Cells & { merchant_id: string })[]> {
  const { rows } = await client.query<Cells & { merchant_id: string }>(
    `select merchant_id, balance::text, frozen::text, available::text from rm_wallets ${scoped(merchantId)}`,
    merchantId === undefined ? [] : [merchantId],
  );
  return rows;
}

/** The holds' rows (of one merchant, or all), on the snapshot's connection. */
export async function holdRows(
  client: PoolClient,
  merchantId: string | undefined,
): Promise<(Cells & { merchant_id: string; order_no: string; attempt: number })[]> {
  const { rows } = await client.query<Cells & { merchant_id: string; order_no: string; attempt: number }>(
    `select merchant_id, order_no, attempt, amount::text from rm_wallet_holds ${scoped(merchantId)}`,
    merchantId === undefined ? [] : [merchantId],
  );
  return rows;
}

/** Each wallet's revisions to read, first to last. */
export type RevisionRanges = ReadonlyMap<string, { first: number; last: number }>;

const rangeParams = (ranges: RevisionRanges) => [[...ranges.keys()], [...ranges.values()].map((r) => r.first), [...ranges.values()].map((r) => r.last)];

// One index range scan per wallet: "offset 0" keeps the planner from flattening the
// subquery into a join, which it would run as a scan of the whole table.
const inRanges = (table: string) =>
  `from unnest($1::text[], $2::bigint[], $3::bigint[]) as r(merchant_id, first, last)
   cross join lateral (select * from ${table} t where t.merchant_id = r.merchant_id and t.revision between r.first and r.last offset 0) x`;

/**
 * Each wallet's digest of its statement lines in the ranges: the md5 of the
 * lines' texts, one a line in revision order, each its compared columns
 * joined by `|` (an order_no null as `\N`, the position as `commit/prepare`).
 */
export async function lineDigestRows(pool: Pool, ranges: RevisionRanges): Promise<{ merchant_id: string; digest: string }[]> {
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
  return rows;
}

/** The statement lines in the ranges. */
export async function statementLineRows(pool: Pool, ranges: RevisionRanges): Promise<WalletKeyedRow[]> {
  const { rows } = await pool.query<WalletKeyedRow>(
    `select x.merchant_id, x.revision::text, x.entry_type, x.order_no, x.amount::text, x.balance_after::text, x.frozen_after::text,
       x.available_after::text, x.position_commit || '/' || x.position_prepare as position ${inRanges('rm_statement_lines')}`,
    rangeParams(ranges),
  );
  return rows;
}

/** A time as isoTimestamp writes it (to_char rounds its milliseconds: `time` must hold whole ones). */
const isoTimestampText = (time: string) => `to_char(${time} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;
const recordedAtText = (alias: string) => isoTimestampText(`${alias}.recorded_at`);

/** A snapshot the read model lists, with its columns as the verification compares them. */
export interface SnapshotCheckRow {
  merchant_id: string;
  revision: string;
  position: string;
  recorded_at: string;
  event_hash: string;
  balance: string;
  frozen: string;
}

/** The snapshots the read model lists in each wallet's range of revisions; by wallet, then revision. */
export async function snapshotCheckRows(pool: Pool, ranges: RevisionRanges): Promise<SnapshotCheckRow[]> {
  const { rows } = await pool.query<SnapshotCheckRow>({
    name: 'verify-snapshots-listed',
    // Each wallet's range read by its own walk of the index ("offset 0" keeps each one).
    text: `select s.merchant_id, s.revision::text, s.position_commit || '/' || s.position_prepare as position, ${recordedAtText('s')} as recorded_at,
       s.event_hash, s.balance::text, s.frozen::text
     from unnest($1::text[], $2::bigint[], $3::bigint[]) as r(merchant_id, first, last)
     cross join lateral (select * from rm_wallet_snapshots s where s.merchant_id = r.merchant_id and s.revision between r.first and r.last offset 0) s
     order by s.merchant_id, s.revision`,
    values: rangeParams(ranges),
  });
  return rows;
}

/** A replayed wallet's first and last revisions: the revision of its WalletOpened, and of its last event. */
export interface ReplayedWallet {
  openedRevision: number;
  revision: bigint;
}

/**
 * Statement lines and snapshots up to the checkpoint (of one merchant, or
 * all) that none of the replayed wallets' events accounts for: of wallets
 * not replayed, or outside the revisions replayed (a line at or before
 * WalletOpened, either after the last event); by wallet, then revision.
 */
export async function unaccountedWalletRows(
  pool: Pool,
  wallets: ReadonlyMap<string, ReplayedWallet>,
  checkpoint: GlobalPosition,
  merchantId: string | undefined,
): Promise<{ lines: WalletKeyedRow[]; snapshots: WalletKeyedRow[] }> {
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
  const lines = await pool.query<WalletKeyedRow>(
    `select x.merchant_id, x.revision::text, x.entry_type, x.order_no, x.amount::text, x.balance_after::text,
       x.frozen_after::text, x.available_after::text, x.position_commit || '/' || x.position_prepare as position
     from rm_statement_lines x ${replayed}
     where ${inScope} and (w.merchant_id is null or x.revision <= w.opened or x.revision > w.last) ${outside('<=')}
     order by x.merchant_id, x.revision`,
    params,
  );
  const snapshots = await pool.query<WalletKeyedRow>(
    `select x.merchant_id, x.revision::text, x.position_commit || '/' || x.position_prepare as position,
       ${recordedAtText('x')} as recorded_at, x.event_hash, x.balance::text, x.frozen::text
     from rm_wallet_snapshots x ${replayed}
     where ${inScope} and (w.merchant_id is null or x.revision < w.opened or x.revision > w.last) ${outside('<')}
     order by x.merchant_id, x.revision`,
    params,
  );
  return { lines: lines.rows, snapshots: snapshots.rows };
}
