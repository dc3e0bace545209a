import type { Failure, Reply } from '../api';
import { h } from '../dom';
import type { ApprovalView } from '../replies';
import { refreshPendingCount } from '../shell';
import { APPROVERS } from './approval-words';
import { link } from './bits';

/**
 * A change that moves money (a deposit, a resolution, an adjustment, a bulk
 * apply) either happens, or, over APPROVAL_THRESHOLD, becomes a request for
 * a second person: 202 APPROVAL_REQUIRED with the request as its data, and
 * nothing moved. Neither done nor an error, so the page says which it was.
 */
export type Gated<T> = Failure | { ok: true; waiting: ApprovalView } | { ok: true; waiting?: undefined; data: T };

/** The reply of a route behind the four-eyes rule, told apart: refused, waiting for a second person, or done. */
export function gated<T>(reply: Reply<T | ApprovalView>): Gated<T> {
  if (!reply.ok) return reply;
  // The envelope's code says what the data is: the request, or what the route answers when it is done.
  if (reply.body.code === 'APPROVAL_REQUIRED') return { ok: true, waiting: reply.data as ApprovalView };
  return { ok: true, data: reply.data as T };
}

/** Says that nothing moved yet, who must approve, and where the request is. A status: read out as it appears. */
export const waitingNotice = (a: ApprovalView) =>
  h(
    'div',
    { class: 'notice waiting', role: 'status', 'data-approval': a.approval_id, tabindex: -1 },
    h('strong', {}, 'Waiting for a second person’s approval.'),
    ` ${a.summary}: nothing has moved yet. ${capitalised(APPROVERS[a.kind])} must approve it in the Approvals inbox. `,
    link(`#/approval/${a.approval_id}`, `Open the request ${a.approval_id}`),
  );

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Said in a confirmation of a movement: the console does not know the threshold, the service does. */
export const fourEyesHint = () =>
  h('p', { class: 'muted' }, 'Over the approval threshold it becomes a request that a second person approves first: nothing moves until then.');

/** Shows that a change became a request, in place of what it would have shown, and has the navigation count it. */
export function showWaiting(slot: Element, approval: ApprovalView) {
  const notice = waitingNotice(approval);
  slot.replaceChildren(notice);
  notice.focus();
  void refreshPendingCount();
}
