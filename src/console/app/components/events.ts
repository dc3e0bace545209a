import { h } from '../dom';
import type { OrderEventType, OrderEventView, StatementLine, WalletEventType } from '../replies';
import { json } from './bits';

/**
 * Events in words and amounts, as staff read them ("Placed: 1.20 USD to
 * 13800000000 (attempt 1)", "Frozen 1.20 for T01J..."), each with the event
 * itself one click away. One line per event type, order's and wallet's: a
 * type added to the ledger breaks the type check here until it is worded.
 */

type Data = Record<string, unknown>;

const str = (value: unknown): string => (value === undefined || value === null ? '' : String(value));
const attempt = (d: Data) => (d.attempt === undefined ? '' : ` (attempt ${str(d.attempt)})`);
const fields = (value: unknown) => {
  const entries = value && typeof value === 'object' ? Object.entries(value) : [];
  return entries.length ? ` [${entries.map(([k, v]) => `${k} ${str(v)}`).join(', ')}]` : '';
};

/** An order event's data as the back office shows it (snake_case, amounts as "1.20"); `by` is the name of the staff member it names. */
const ORDER_EVENTS: Record<OrderEventType, (d: Data, by: string) => string> = {
  OrderPlaced: (d) => `Placed: ${str(d.amount)} ${str(d.currency)} to ${str(d.account_id)}${fields(d.account_fields)}${attempt(d)}`,
  OrderAccepted: (d) => `Accepted${attempt(d)}`,
  OrderRefused: (d) => `Refused${attempt(d)}: ${str(d.code)}`,
  OrderSentUpstream: (d) => `Sent upstream (attempt ${str(d.upstream_attempt)})`,
  OrderResultUnknown: (d) => `Result unknown: ${str(d.reason)}${d.evidence && d.evidence !== d.reason ? ` (${str(d.evidence)})` : ''}`,
  OrderDeliveryConfirmed: () => 'Delivered: the upstream confirmed it',
  OrderDeliveryFailed: (d) => `Not delivered: ${str(d.fail_code)}, ${str(d.fail_reason)}`,
  OrderResolved: (d, by) => `Resolved as ${str(d.outcome)} by ${by}: ${str(d.note)}`,
  OrderSucceeded: () => 'Succeeded',
  OrderFailed: (d) => `Failed: ${str(d.fail_code)}, ${str(d.fail_reason)}`,
};

/** A statement line: its amount from the line, the rest from the event's data as stored; the order or reference has a column of its own. */
const WALLET_EVENTS: Record<WalletEventType, (l: StatementLine, d: Data) => string> = {
  WalletOpened: (_l, d) => `Opened, in ${str(d.currency)}`,
  FundsDeposited: (l) => `Deposited ${l.amount}`,
  FundsFrozen: (l, d) => `Frozen ${l.amount}${attempt(d)}`,
  FrozenFundsDeducted: (l) => `Deducted ${l.amount}${l.reason ? ` (${l.reason})` : ''}`,
  FrozenFundsReleased: (l) => `Released ${l.amount} (${str(l.reason)})`,
  WalletAdjusted: (l, d) => `Adjusted: ${str(d.direction)} of ${l.amount}, ${str(l.reason)}: ${str(d.note)}`,
};

const known = <K extends string>(table: Record<K, unknown>, type: string): type is K => Object.hasOwn(table, type);

export function orderEventWords(e: OrderEventView): string {
  if (!known(ORDER_EVENTS, e.type)) return e.type;
  const words = ORDER_EVENTS[e.type](e.data, e.staff_name ?? str(e.data.resolved_by));
  // The second person, when the four-eyes rule asked for one.
  return e.data.approved_by === undefined ? words : `${words} (approved by ${e.approved_by_name ?? str(e.data.approved_by)})`;
}

/**
 * What a resolution rests on, in words: a line of the upstream's report, or
 * the upstream's answer to a re-query (snake_case, as the order's page gives
 * it); undefined for a person's own finding.
 */
export function evidenceWords(evidence: Record<string, unknown> | undefined): string | undefined {
  if (evidence === undefined) return undefined;
  if (evidence.source === 'report')
    return `Line ${str(evidence.line)} of the upstream's report ${str(evidence.report_id)}: ${str(evidence.status)}${evidence.reference ? `, reference ${str(evidence.reference)}` : ''}`;
  if (evidence.source === 'requery') {
    const upstream = evidence.upstream && typeof evidence.upstream === 'object' ? (evidence.upstream as Data) : {};
    return `The upstream's answer to re-query job ${str(evidence.job_id)}: ${str(upstream.status ?? JSON.stringify(evidence.upstream))}`;
  }
  return JSON.stringify(evidence);
}

export function walletLineWords(l: StatementLine): string {
  return known(WALLET_EVENTS, l.type) ? WALLET_EVENTS[l.type](l, l.data) : l.type;
}

/** What happened, in words, and the event as the service gave it behind a click. */
export const eventCell = (words: string, summary: string, raw: unknown) =>
  h('div', { class: 'event' }, h('span', {}, words), h('details', {}, h('summary', {}, summary), json(raw)));
