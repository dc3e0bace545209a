import { h } from '../dom';
import type { AppliedView, MatchReason, ReportCategory, RequeryAnswer, RequeryFilterView, RequeryProposal } from '../replies';
import { time } from './format';
import { named } from './names';

/**
 * Bulk reconciliation in words: the upstream's answers, what they argue
 * for, a report's categories and why each item is in its own. One entry per
 * value, so a value added on the server breaks the type check here until it
 * is worded.
 */

export const ANSWER_WORDS: Record<RequeryAnswer, string> = {
  delivered: 'delivered',
  refused: 'refused',
  pending: 'still working on it',
  not_received: 'never received it',
  unknown: 'no clear answer',
};

export const PROPOSAL_WORDS: Record<RequeryProposal, string> = {
  success: 'Resolve as success',
  failed: 'Resolve as failed',
  leave: 'Leave: nothing to decide yet',
  decide: 'A person decides',
};

export const CATEGORY_WORDS: Record<ReportCategory, string> = {
  matched: 'Matched',
  resolvable: 'Resolvable',
  exceptions: 'Exceptions',
  missing: 'Missing',
  in_flight: 'In flight',
};

export const REASON_WORDS: Record<MatchReason, string> = {
  agree: 'both agree',
  result_unknown: 'ours unknown, theirs definitive',
  deducted_they_failed: 'we deducted, they failed it',
  released_they_delivered: 'we released, they delivered it',
  amount_differs: 'the amount differs',
  currency_differs: 'the currency differs',
  never_sent: 'they list an order we never sent',
  not_ours: 'no order of ours',
  absent_from_report: 'ours, absent from the report',
  in_fulfilment: 'ours is still being sent',
};

/** What the last bulk apply did with an order of a job or a report, who applied it and who approved it; a dash before any. */
export const appliedCell = (a: AppliedView | null) =>
  a === null
    ? '—'
    : h(
        'span',
        { title: `${a.code ?? ''} ${a.message ?? ''}`.trim() || undefined },
        `${a.result.replace('_', ' ')}${a.outcome ? ` as ${a.outcome}` : ''}`,
        a.resolved_by ? [' (resolved by ', named(a.resolved_by_name, a.resolved_by), ')'] : '',
        ` by `,
        named(a.applied_by_name, a.applied_by),
        a.approved_by ? [', approved by ', named(a.approved_by_name, a.approved_by)] : '',
        `, ${time(a.applied_at)}`,
      );

/** What a job selected, in words: "The 32 orders chosen in the queue", "The queue's orders of Acme Games, created from ...". */
export function filterWords(f: RequeryFilterView): string {
  const narrowed = [
    f.merchant_id !== null && `of ${f.merchant_name ?? f.merchant_id}`,
    f.created_from !== null && `created from ${time(f.created_from)}`,
    f.created_to !== null && `created before ${time(f.created_to)}`,
  ].filter(Boolean);
  const chosen = f.order_nos === null ? 'The queue’s orders' : `The ${f.order_nos === 1 ? 'order' : `${f.order_nos} orders`} chosen in the queue`;
  return [chosen, ...narrowed].join(narrowed.length > 0 && f.order_nos !== null ? ', ' : ' ');
}
