import { amountsText, effectOf, KIND_WORDS, payloadText } from '../components/approval-words';
import { facts, json, link, pill } from '../components/bits';
import { time } from '../components/format';
import { named } from '../components/names';
import { Child, h } from '../dom';
import type { ApprovalView } from '../replies';
import { may } from '../session';
import { decisionPanel } from './approval-decide';

/** The merchant by name; a link to its page for an administrator, the only role that has one. */
const merchantLink = (id: string, name: string | null) => (may() ? link(`#/merchant/${id}`, named(name, id)) : named(name, id));

/** Where a bulk apply's proposals come from: the report or the re-query job, a link to its page. */
function sourceOf(selection: unknown): Child {
  const s = (selection ?? {}) as Record<string, unknown>;
  if (s.source === 'report' && typeof s.reportId === 'string') return link(`#/report/${s.reportId}`, `upstream report ${s.reportId}`);
  if (s.source === 'requery' && typeof s.jobId === 'string') return link(`#/requery/${s.jobId}`, `re-query job ${s.jobId}`);
  return '—';
}

/** How it ended: what the movement did, why the ledger refused it, or that nothing moved. */
function resultOf(a: ApprovalView): Child {
  if (a.status === 'rejected') return a.decided_by === a.requested_by ? 'Withdrawn by its requester: nothing moved.' : 'Rejected: nothing moved.';
  if (a.status === 'pending') return null;
  if (a.result === null) return 'Approved; the money has not moved yet. The service carries it out within a minute.';
  if (!a.result.ok) return h('span', { class: 'bad' }, `Not carried out: ${a.result.code}: ${a.result.message}`);
  return h(
    'div',
    { class: 'event' },
    h('span', { class: 'ok' }, `Carried out ${time(a.carried_out_at)}.`, afterwards(a.result.detail)),
    h('details', {}, h('summary', {}, 'What the service answered'), json(a.result.detail)),
  );
}

/** What the movement left, from what the service answered: a wallet's balance after it, an order's stage. */
function afterwards(detail: Record<string, unknown>): string {
  const wallet = (detail.wallet ?? detail) as Record<string, unknown>;
  if (typeof wallet.balance === 'string')
    return ` Wallet after it: balance ${wallet.balance} ${String(wallet.currency ?? '')}, available ${String(wallet.available_balance)}.`;
  if (typeof detail.stage === 'string') return ` The order is now ${detail.stage}.`;
  const counts = detail.counts as Record<string, number> | undefined;
  if (counts) return ` ${counts.applied} applied, ${counts.already_applied} already applied, ${counts.skipped} skipped, ${counts.refused} refused.`;
  return '';
}

/**
 * One request as the inbox shows it: what it is and would move, who asked
 * and why, and once decided who decided, why, and what came of it; and,
 * while it waits, the decision for whoever may make it. `decided` is told
 * the request as it stands after a decision made here.
 */
export function approvalCard(a: ApprovalView, decided: (updated: ApprovalView) => void): HTMLElement {
  const orderNo = payloadText(a, 'order_no');
  const headingId = `approval-${a.approval_id}`;
  return h(
    'article',
    { class: `card approval ${a.status}`, 'aria-labelledby': headingId, 'data-approval': a.approval_id, tabindex: -1 },
    h('h2', { id: headingId }, link(`#/approval/${a.approval_id}`, a.summary)),
    facts([
      ['Status', h('span', {}, pill(a.status), a.status === 'pending' ? ` since ${time(a.requested_at)}` : '')],
      ['Kind', KIND_WORDS[a.kind]],
      ['Merchant', a.merchant_id === null ? 'several merchants' : merchantLink(a.merchant_id, a.merchant_name)],
      ['Amount', h('span', { class: 'amount' }, amountsText(a))],
      orderNo !== undefined && ['Order', link(`#/order/${orderNo}`, orderNo)],
      a.kind === 'bulk_resolution' && ['From', sourceOf(a.payload.selection)],
      ['What moves', effectOf(a)],
      ['Requested by', h('span', {}, named(a.requested_by_name, a.requested_by), ` at ${time(a.requested_at)}`)],
      ['Their note', a.note],
      a.decided_by !== null && [
        a.status === 'rejected' ? 'Rejected by' : 'Approved by',
        h('span', {}, named(a.decided_by_name, a.decided_by), ` at ${time(a.decided_at)}`),
      ],
      a.decision_note !== null && ['Decision note', a.decision_note],
      a.status !== 'pending' && ['Result', resultOf(a)],
      ['Request', h('span', { class: 'mono' }, a.approval_id)],
    ]),
    h('details', {}, h('summary', {}, 'The request as recorded'), json(a.payload)),
    decisionPanel(a, decided),
  );
}
