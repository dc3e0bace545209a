/**
 * The parser of a statement check: each line read from the file becomes a
 * line whose every column has the right shape and whose amounts are money
 * (src/shared/money.ts), and what a line's data implies is derived from it.
 */
import { WalletEvent, walletMovement } from '../../ledger/wallet/wallet.decider';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount, Minor, parseFormattedAmount, parseMinorUnits } from '../../shared/money';
import { STATEMENT_CSV_COLUMNS } from '../wallet-statement';
import { ProblemKind } from './statement-report';
import { RawLine } from './statement-reader';

/** A line whose columns all have the right shape. */
export interface ParsedLine {
  line: number;
  revision: number;
  type: string;
  orderNo: string | null;
  reference: string | null;
  reason: string | null;
  occurredAt: string;
  recordedAt: string;
  amount: string;
  balanceAfter: string;
  frozenAfter: string;
  availableAfter: string;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
  /** balance_after and frozen_after as the line states them. */
  stated: { balance: Minor; frozen: Minor };
}

const WALLET_EVENT_TYPES = new Set(['WalletOpened', 'FundsDeposited', 'FundsFrozen', 'FrozenFundsDeducted', 'FrozenFundsReleased', 'WalletAdjusted']);
const MOVES_MONEY = new Set(['FundsDeposited', 'FundsFrozen', 'FrozenFundsDeducted', 'FrozenFundsReleased', 'WalletAdjusted']);

/** Validates the shape of every column; returns the parsed line or what is wrong with it (a MALFORMED line). */
export function parseLine(raw: RawLine): ParsedLine | string {
  if (raw.error || !raw.fields) return raw.error ?? 'the line cannot be read';
  const f = raw.fields;
  const missing = STATEMENT_CSV_COLUMNS.filter((c) => !(c in f));
  if (missing.length > 0) return `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
  if (typeof f.revision !== 'number' || !Number.isSafeInteger(f.revision) || f.revision < 0) {
    return `revision ${JSON.stringify(f.revision)} is not a non-negative integer`;
  }
  for (const column of ['type', 'amount', 'balance_after', 'frozen_after', 'available_after', 'prev_hash', 'hash', 'occurred_at', 'recorded_at'] as const) {
    if (typeof f[column] !== 'string') return `${column} is not a string`;
  }
  for (const column of ['order_no', 'reference', 'reason'] as const) {
    if (f[column] !== null && typeof f[column] !== 'string') return `${column} is neither a string nor null`;
  }
  const amounts: Partial<Record<'amount' | 'balance_after' | 'frozen_after' | 'available_after', Minor>> = {};
  for (const column of ['amount', 'balance_after', 'frozen_after', 'available_after'] as const) {
    amounts[column] = parseFormattedAmount(f[column] as string);
    if (amounts[column] === undefined) return `${column} ${JSON.stringify(f[column])} is not an amount like "12.50"`;
  }
  if (f.data === null || typeof f.data !== 'object' || Array.isArray(f.data)) return 'data is not a JSON object';
  return {
    line: raw.line,
    revision: f.revision,
    type: f.type as string,
    orderNo: f.order_no as string | null,
    reference: f.reference as string | null,
    reason: f.reason as string | null,
    occurredAt: f.occurred_at as string,
    recordedAt: f.recorded_at as string,
    amount: f.amount as string,
    balanceAfter: f.balance_after as string,
    frozenAfter: f.frozen_after as string,
    availableAfter: f.available_after as string,
    data: f.data as Record<string, unknown>,
    prevHash: f.prev_hash as string,
    hash: f.hash as string,
    stated: { balance: amounts.balance_after!, frozen: amounts.frozen_after! },
  };
}

/** The movement the (hash-verified) data implies, or what a derived column gets wrong. */
export function derivedProblem(p: ParsedLine): { balance: bigint; frozen: bigint } | { kind: ProblemKind; message: string } {
  const malformed = (message: string) => ({ kind: 'MALFORMED' as const, message });
  const altered = (message: string) => ({ kind: 'ALTERED' as const, message });
  if (!WALLET_EVENT_TYPES.has(p.type)) return malformed(`unknown event type ${JSON.stringify(p.type)}: not a wallet event`);
  const raw = p.data.amount;
  const amount = raw === undefined ? undefined : parseMinorUnits(raw);
  if (raw !== undefined && amount === undefined) return malformed(`data.amount ${JSON.stringify(raw)} is not a whole number of minor units`);
  if (amount === undefined && MOVES_MONEY.has(p.type)) return malformed(`data.amount is missing, and a ${p.type} moves money`);
  if (p.type === 'WalletAdjusted' && p.data.direction !== 'credit' && p.data.direction !== 'debit') {
    return malformed(`data.direction ${JSON.stringify(p.data.direction ?? null)} is neither credit nor debit`);
  }
  const expectedAmount = formatAmount(amount ?? 0n);
  if (p.amount !== expectedAmount)
    return altered(`amount is ${p.amount} but the event's data says ${expectedAmount} (data.amount ${JSON.stringify(raw ?? null)})`);
  const text = (key: string) => (typeof p.data[key] === 'string' ? (p.data[key] as string) : null);
  for (const [column, value, key] of [
    ['order_no', p.orderNo, 'orderNo'],
    ['reference', p.reference, 'reference'],
    ['reason', p.reason, 'reason'],
  ] as const) {
    if (value !== text(key)) return altered(`${column} is ${JSON.stringify(value)} but the event's data says ${JSON.stringify(text(key))}`);
  }
  const at = text('at');
  if (at !== null) {
    const date = new Date(at);
    const expected = Number.isNaN(date.getTime()) ? undefined : isoTimestamp(date);
    if (expected !== undefined && p.occurredAt !== expected) return altered(`occurred_at is ${p.occurredAt} but the event's data says ${expected}`);
  } else if (p.occurredAt !== p.recordedAt) {
    return altered(`occurred_at is ${p.occurredAt} but the event's data has no time, so it must be recorded_at ${p.recordedAt}`);
  }
  const event = { type: p.type, data: { ...p.data, amount: amount ?? 0n } } as unknown as WalletEvent;
  return walletMovement(event);
}
