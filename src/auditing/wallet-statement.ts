import { EventStore, formatPosition, GlobalPosition, comparePositions, RecordedEvent } from '../infrastructure/event-store/event-store.port';
import { decodeEvent } from '../ledger/event-codec';
import { walletStream } from '../ledger/streams';
import { WalletEvent, walletMovement } from '../ledger/wallet/wallet.decider';
import { isoTimestamp } from '../shared/clock';
import { chainHash, GENESIS_HASH } from '../shared/hash-chain';
import { formatAmount } from '../shared/money';

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

export interface Statement {
  merchant_id: string;
  currency: string;
  lines: StatementLine[];
  /** The revision to pass as `after_revision` for the next page, or null on the last page. */
  next_after_revision: number | null;
}

export interface StatementQuery {
  from?: Date;
  to?: Date;
  afterRevision?: number;
  limit: number;
}

/**
 * Replays a wallet's whole stream, so every line's amounts come from the
 * events and nothing else. An event stored without a chain link gets the
 * link it should have had; `prev_hash` then still checks out.
 */
export async function walletStatement(store: EventStore, merchantId: string, query: StatementQuery): Promise<Statement | undefined> {
  const recorded = await store.readStream(walletStream(merchantId));
  if (recorded.length === 0) return undefined;
  let balance = 0n;
  let frozen = 0n;
  let prevHash = GENESIS_HASH;
  let currency = '';
  const lines: StatementLine[] = [];
  let more = false;
  for (const event of recorded) {
    const domain = decodeEvent<WalletEvent>(event);
    const movement = walletMovement(domain);
    balance += movement.balance;
    frozen += movement.frozen;
    if (domain.type === 'WalletOpened') currency = domain.data.currency;
    const hash = typeof event.metadata.hash === 'string' ? event.metadata.hash : chainHash(prevHash, event.revision, event.type, event.data);
    const line = lineOf(event, domain, balance, frozen, prevHash, hash);
    prevHash = hash;
    if (!selected(event, query)) continue;
    if (lines.length === query.limit) {
      more = true;
      break;
    }
    lines.push(line);
  }
  return { merchant_id: merchantId, currency, lines, next_after_revision: more ? lines[lines.length - 1].revision : null };
}

function selected(event: RecordedEvent, query: StatementQuery): boolean {
  if (query.afterRevision !== undefined && Number(event.revision) <= query.afterRevision) return false;
  if (query.from && event.createdAt < query.from) return false;
  if (query.to && event.createdAt >= query.to) return false;
  return true;
}

function lineOf(event: RecordedEvent, domain: WalletEvent, balance: bigint, frozen: bigint, prevHash: string, hash: string): StatementLine {
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

/** RFC 4180 CSV; `data` is the canonical JSON the hash covers. */
export function statementCsv(statement: Statement): string {
  const cell = (value: unknown) => {
    const text = value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const rows = statement.lines.map((line) => STATEMENT_CSV_COLUMNS.map((c) => cell(line[c])).join(','));
  return `${[STATEMENT_CSV_COLUMNS.join(','), ...rows].join('\r\n')}\r\n`;
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
}

/** The wallet as it stood at an instant (recorded time) or a global position, folded from its events. */
export async function balanceAsOf(store: EventStore, merchantId: string, asOf: { at?: Date; position?: GlobalPosition }): Promise<BalanceAsOf | undefined> {
  const recorded = await store.readStream(walletStream(merchantId));
  if (recorded.length === 0) return undefined;
  let balance = 0n;
  let frozen = 0n;
  let applied = 0;
  let last: RecordedEvent | undefined;
  for (const event of recorded) {
    if (asOf.at && event.createdAt > asOf.at) break;
    if (asOf.position && comparePositions(event.position, asOf.position) > 0) break;
    const movement = walletMovement(decodeEvent<WalletEvent>(event));
    balance += movement.balance;
    frozen += movement.frozen;
    applied++;
    last = event;
  }
  return {
    merchant_id: merchantId,
    as_of: { at: asOf.at ? isoTimestamp(asOf.at) : null, position: asOf.position ? formatPosition(asOf.position) : null },
    balance: formatAmount(balance),
    frozen_balance: formatAmount(frozen),
    available_balance: formatAmount(balance - frozen),
    events_applied: applied,
    last_revision: last ? Number(last.revision) : null,
    last_position: last ? formatPosition(last.position) : null,
  };
}
