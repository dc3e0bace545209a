import { comparePositions, EventStore, formatPosition, GlobalPosition, ReplayedEvent } from '../ledger/ports/event-store.port';
import { walletStream } from '../ledger/streams';
import { WalletEvent } from '../ledger/wallet/wallet.decider';
import { isoTimestamp } from '../shared/clock';
import { formatAmount } from '../shared/money';
import { REPLAY_SLICE } from '../ledger/wallet/wallet-slices';
import { OPENING_TALLY, replayStart, replayTallies, WalletTally } from './wallet-tally';
import { WalletSnapshots } from './wallet-snapshots.reader';

/** One line per wallet event, with the amounts after it and its link in the hash chain. */
export interface StatementLine {
  revision: number;
  position: string;
  recorded_at: string;
  occurred_at: string;
  type: string;
  order_no: string | null;
  reference: string | null;
  reason: string | null;
  amount: string;
  balance_after: string;
  frozen_after: string;
  available_after: string;
  /** The event's data exactly as stored: what the hash covers. */
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** A statement held in memory (tests, small exports). */
export interface Statement {
  merchant_id: string;
  currency: string;
  lines: StatementLine[];
  /** The revision to pass as `after_revision` for the next page, or null on the last page. */
  next_after_revision: number | null;
}

/** A statement whose lines are read from the log as they are written out. */
export interface StatementStream extends Omit<Statement, 'lines'> {
  lines: AsyncIterable<StatementLine>;
}

/** Lines recorded in [from, to), after revision `afterRevision`. */
export interface StatementWindow {
  from?: Date;
  to?: Date;
  afterRevision?: number;
}

/** Lines per page when the caller names no limit: a screen's worth. */
export const STATEMENT_PAGE_SIZE = 100;
export const STATEMENT_PAGE_MAX = 100_000;

/**
 * One page of a wallet's statement (at most `limit` lines), or with no limit
 * the whole statement in the window: an export. Either way the lines are
 * read from the wallet's stream slice by slice while they are written out,
 * so memory does not grow with the wallet or the page.
 *
 * Every amount comes from the events. A page that starts mid-stream starts
 * from the nearest snapshot before it and replays the events between; an
 * export never uses snapshots and replays from the wallet's first event, so
 * it stands alone for an offline check. Recorded times within a stream
 * follow its revisions, so the lines of a window are consecutive revisions
 * and the next page can be known before the first line is written.
 */
export async function openStatement(
  store: EventStore,
  snapshots: WalletSnapshots | undefined,
  merchantId: string,
  window: StatementWindow,
  limit?: number,
): Promise<StatementStream | undefined> {
  const stream = walletStream(merchantId);
  const [opened] = await store.readStream(stream, 0n, 1);
  if (!opened) return undefined;
  const currency = opened.type === 'WalletOpened' ? String(opened.data.currency) : '';
  const midStream = window.afterRevision !== undefined || window.from !== undefined;
  const { tally } =
    limit !== undefined && midStream
      ? await replayStart(store, snapshots, merchantId, {
          revisionAtMost: window.afterRevision === undefined ? undefined : BigInt(window.afterRevision),
          recordedBefore: window.from,
        })
      : { tally: OPENING_TALLY };
  // Without a time window a page needs a known number of events: read no more than that.
  const needed = limit === undefined || window.from || window.to ? REPLAY_SLICE : (window.afterRevision ?? -1) - Number(tally.revision) + limit;
  const lines = statementLines(store, merchantId, tally, window, Math.min(REPLAY_SLICE, needed))[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) return { merchant_id: merchantId, currency, lines: noLines(), next_after_revision: null };

  let next: number | null = null;
  if (limit !== undefined) {
    // Lines of a window are consecutive revisions: there is a next page if the revision after this page is in the window.
    const [after] = await store.readStream(stream, BigInt(first.value.revision + limit), 1);
    if (after && (!window.to || after.createdAt < window.to)) next = first.value.revision + limit - 1;
  }
  async function* page(): AsyncGenerator<StatementLine> {
    try {
      yield first.value;
      for (let written = 1; limit === undefined || written < limit; written++) {
        const line = await lines.next();
        if (line.done) return;
        yield line.value;
      }
    } finally {
      await lines.return?.(undefined);
    }
  }
  return { merchant_id: merchantId, currency, lines: page(), next_after_revision: next };
}

async function* noLines(): AsyncGenerator<StatementLine> {}

async function* statementLines(
  store: EventStore,
  merchantId: string,
  start: WalletTally,
  window: StatementWindow,
  sliceSize: number,
): AsyncGenerator<StatementLine> {
  for await (const { event, domain, before, after } of replayTallies(store, merchantId, start, { sliceSize })) {
    if (window.to && event.createdAt >= window.to) return;
    if (window.afterRevision !== undefined && Number(event.revision) <= window.afterRevision) continue;
    if (window.from && event.createdAt < window.from) continue;
    yield lineOf(event, domain, after, before.hash);
  }
}

function lineOf(event: ReplayedEvent, domain: WalletEvent, { state: { balance, frozen }, hash }: WalletTally, prevHash: string): StatementLine {
  const d = domain.data as Partial<Record<'orderNo' | 'reference' | 'reason' | 'at', string>> & { amount?: bigint };
  return {
    revision: Number(event.revision),
    position: formatPosition(event.position),
    recorded_at: isoTimestamp(event.createdAt),
    occurred_at: d.at ? isoTimestamp(new Date(d.at)) : isoTimestamp(event.createdAt),
    type: event.type,
    order_no: d.orderNo ?? null,
    reference: d.reference ?? null,
    reason: d.reason ?? null,
    amount: formatAmount(d.amount ?? 0n),
    balance_after: formatAmount(balance),
    frozen_after: formatAmount(frozen),
    available_after: formatAmount(balance - frozen),
    data: event.data,
    prev_hash: prevHash,
    hash,
  };
}

export const STATEMENT_CSV_COLUMNS = [
  'revision',
  'position',
  'recorded_at',
  'occurred_at',
  'type',
  'order_no',
  'reference',
  'reason',
  'amount',
  'balance_after',
  'frozen_after',
  'available_after',
  'data',
  'prev_hash',
  'hash',
] as const;

/** RFC 4180 CSV; `data` is the JSON of the event's data. */
export const STATEMENT_CSV_HEADER = `${STATEMENT_CSV_COLUMNS.join(',')}\r\n`;

export function statementCsvRow(line: StatementLine): string {
  const cell = (value: unknown) => {
    const text = value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return `${STATEMENT_CSV_COLUMNS.map((c) => cell(line[c])).join(',')}\r\n`;
}

export function statementCsv(statement: Statement): string {
  return STATEMENT_CSV_HEADER + statement.lines.map(statementCsvRow).join('');
}

export interface BalanceAsOf {
  merchant_id: string;
  as_of: { at: string | null; position: string | null };
  balance: string;
  frozen_balance: string;
  available_balance: string;
  events_applied: number;
  last_revision: number | null;
  last_position: string | null;
  /** The snapshot the replay started from (null: from the first event). */
  from_snapshot: { revision: number; position: string } | null;
}

/**
 * The wallet as it stood at an instant (recorded time) or a global position:
 * the nearest snapshot at or before it, confirmed against the log, plus the
 * events after that snapshot up to there (at most one snapshot interval).
 * `fullReplay` ignores the snapshots and folds every event from the first.
 */
export async function balanceAsOf(
  store: EventStore,
  snapshots: WalletSnapshots | undefined,
  merchantId: string,
  asOf: { at?: Date; position?: GlobalPosition },
  { fullReplay = false }: { fullReplay?: boolean } = {},
): Promise<BalanceAsOf | undefined> {
  const start = await replayStart(store, fullReplay ? undefined : snapshots, merchantId, { recordedAtMost: asOf.at, positionAtMost: asOf.position });
  let tally = start.tally;
  let exists = start.snapshot !== undefined;
  for await (const { event, after } of replayTallies(store, merchantId, tally)) {
    exists = true;
    if (asOf.at && event.createdAt > asOf.at) break;
    if (asOf.position && comparePositions(event.position, asOf.position) > 0) break;
    tally = after;
  }
  if (!exists) return undefined;
  const { balance, frozen } = tally.state;
  return {
    merchant_id: merchantId,
    as_of: { at: asOf.at ? isoTimestamp(asOf.at) : null, position: asOf.position ? formatPosition(asOf.position) : null },
    balance: formatAmount(balance),
    frozen_balance: formatAmount(frozen),
    available_balance: formatAmount(balance - frozen),
    events_applied: Number(tally.revision + 1n),
    last_revision: tally.position ? Number(tally.revision) : null,
    last_position: tally.position ? formatPosition(tally.position) : null,
    from_snapshot: start.snapshot ? { revision: Number(start.snapshot.revision), position: formatPosition(start.snapshot.position) } : null,
  };
}
