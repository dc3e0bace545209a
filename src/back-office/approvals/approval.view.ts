import { formatAmount } from '../../shared/money';
import type { Names } from '../display-names/display-names';
import { ApprovalKind, ApprovalResult, ApprovalState, StoredAmount } from './approval.decider';

/**
 * What a person sees of a request: `pending` until someone decides it;
 * `approved` once granted (`carried_out_at` says when the money moved);
 * `failed` when it was granted but the ledger refused the movement when it
 * was carried out (an order resolved meanwhile by someone else, a balance too
 * low by then: `result` says why); `rejected` when declined or withdrawn.
 */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'failed'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** An approval as its stream stands at `revision`: what the inbox's row holds and the views are made from. */
export interface ApprovalRecord {
  approvalId: string;
  /** The stream revision it shows; -1 for a row written before its request reached the log. */
  revision: number;
  kind: ApprovalKind;
  status: ApprovalStatus;
  summary: string;
  merchantId: string | null;
  amounts: StoredAmount[];
  payload: Record<string, unknown>;
  requestedBy: string;
  requestedAt: string;
  note: string;
  decidedBy: string | null;
  decidedAt: string | null;
  decisionNote: string | null;
  carriedOutAt: string | null;
  result: ApprovalResult | null;
}

/** The record of an approval folded from its stream (a stream that exists: it starts with the request). */
export function recordOf(state: Exclude<ApprovalState, { stage: 'none' }>, revision: number): ApprovalRecord {
  const { request } = state;
  const decision = state.stage === 'rejected' ? state.rejected : state.stage === 'pending' ? undefined : state.granted;
  const result = state.stage === 'carried_out' ? state.result : null;
  return {
    approvalId: request.approvalId,
    revision,
    kind: request.kind,
    status: state.stage === 'pending' || state.stage === 'rejected' ? state.stage : result?.ok === false ? 'failed' : 'approved',
    summary: request.summary,
    merchantId: request.merchantId ?? null,
    amounts: request.amounts,
    payload: request.payload,
    requestedBy: request.requestedBy,
    requestedAt: request.at,
    note: request.note,
    decidedBy: decision?.by ?? null,
    decidedAt: decision?.at ?? null,
    decisionNote: decision?.note ?? null,
    carriedOutAt: state.stage === 'carried_out' ? state.carriedOutAt : null,
    result,
  };
}

/** A request for a second person's approval, as the back office shows it. */
export interface ApprovalView {
  approval_id: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  /** One line for the inbox. */
  summary: string;
  merchant_id: string | null;
  merchant_name: string | null;
  /** What would move, per currency ("12.50"). */
  amounts: { currency: string; amount: string }[];
  /** What carrying it out needs, as the requesting route recorded it (amounts as "12.50"). */
  payload: Record<string, unknown>;
  requested_by: string;
  requested_by_name: string | null;
  requested_at: string;
  /** The requester's reason. */
  note: string;
  /** Who approved or rejected it (the requester, when they withdrew it), when and why. */
  decided_by: string | null;
  decided_by_name: string | null;
  decided_at: string | null;
  decision_note: string | null;
  /** When the movement was carried out after the approval; null before (or when rejected). */
  carried_out_at: string | null;
  /** What carrying it out did (`detail`, by kind), or the ledger's refusal (`code`, `message`). */
  result: ApprovalResult | null;
}

/** A page of approvals, with how many match in all. */
export interface ApprovalPageView {
  total: number;
  approvals: ApprovalView[];
}

export const approvalView = (r: ApprovalRecord, names: Names): ApprovalView => ({
  approval_id: r.approvalId,
  kind: r.kind,
  status: r.status,
  summary: r.summary,
  merchant_id: r.merchantId,
  merchant_name: r.merchantId === null ? null : names.merchant(r.merchantId),
  amounts: r.amounts.map(({ currency, amount }) => ({ currency, amount: formatAmount(BigInt(amount)) })),
  payload: r.payload,
  requested_by: r.requestedBy,
  requested_by_name: names.staff(r.requestedBy),
  requested_at: r.requestedAt,
  note: r.note,
  decided_by: r.decidedBy,
  decided_by_name: names.staff(r.decidedBy),
  decided_at: r.decidedAt,
  decision_note: r.decisionNote,
  carried_out_at: r.carriedOutAt,
  result: r.result,
});

/** The ids a set of records names, for DisplayNames. */
export const namedIn = (records: readonly ApprovalRecord[]) => ({
  merchants: records.flatMap((r) => (r.merchantId === null ? [] : [r.merchantId])),
  staff: records.flatMap((r) => [r.requestedBy, r.decidedBy]),
});
