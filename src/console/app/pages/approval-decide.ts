import { api, segment } from '../api';
import { amountsText, APPROVERS, effectOf } from '../components/approval-words';
import { confirmIn } from '../components/confirm';
import { announce, errorBox } from '../components/feedback';
import { Child, h } from '../dom';
import type { ApprovalKind, ApprovalView, StaffRole } from '../replies';
import { currentSession } from '../session';

/** The roles that may approve each kind, besides admin; the service's rule, said here to offer only what it accepts. */
const DECIDERS: Record<ApprovalKind, readonly StaffRole[]> = {
  resolution: ['reconciler'],
  bulk_resolution: ['reconciler'],
  deposit: [],
  adjustment: [],
};

/** Approving or rejecting as the confirmation says it. */
type Decision = 'approve' | 'reject';

/**
 * The decision on a waiting request, for whoever may make it: a required
 * note, then Approve or Reject, each behind a confirmation that says what
 * moves. Its requester gets no Approve (a second person must), and may
 * withdraw it; a role that may not decide the kind is told who may.
 */
export function decisionPanel(a: ApprovalView, decided: (updated: ApprovalView) => void): Child {
  const me = currentSession();
  if (a.status !== 'pending' || me === null) return null;
  const mine = a.requested_by === me.staff_id;
  if (!mine && me.role !== 'admin' && !DECIDERS[a.kind].includes(me.role))
    return h('p', { class: 'muted who-decides' }, `Waiting for ${APPROVERS[a.kind].replace(' other than you', '')} to decide it: your role may not.`);
  const choices: Decision[] = mine ? ['reject'] : ['approve', 'reject'];
  const confirmSlot = h('div');
  const note = h('textarea', { id: `decision-note-${a.approval_id}`, name: 'note', required: true, maxlength: 1000 });
  const buttons = choices.map((choice) =>
    h(
      'button',
      { type: 'submit', value: choice, class: choice === 'approve' ? undefined : 'secondary', 'data-decision': choice },
      `${label(choice, mine)}…`,
      h('span', { class: 'visually-hidden' }, ` ${a.summary}`),
    ),
  );
  const decide = (choice: Decision, asker: HTMLElement) => {
    const text = note.value.trim();
    if (!text) return note.reportValidity();
    confirmIn(confirmSlot, {
      question: choice === 'approve' ? `Approve: ${a.summary}?` : `${label(choice, mine)}: ${a.summary}?`,
      effect:
        choice === 'approve'
          ? `${effectOf(a)} The money moves as soon as you confirm, and the event names ${a.requested_by_name ?? a.requested_by} and you.`
          : `Nothing moves: ${amountsText(a)} stays where it is, and the request is closed for good (it may be asked for again).`,
      more: h('p', {}, `Your note: ${text}`),
      label: choice === 'approve' ? 'Confirm: approve and move the money' : `Confirm: ${label(choice, mine).toLowerCase()}`,
      danger: choice === 'approve',
      id: `confirm-${choice}-${a.approval_id}`,
      back: () => asker,
      onConfirm: async (result) => {
        const reply = await api<ApprovalView>('POST', `/admin/v1/approvals/${segment(a.approval_id)}/${choice}`, { note: text });
        if (!reply.ok) return result.replaceChildren(errorBox(reply));
        announce(`${a.summary}: ${reply.data.status}.`);
        decided(reply.data);
      },
    });
  };
  const form = h(
    'form',
    { class: 'fields decision', 'aria-label': `Decide: ${a.summary}` },
    h('label', { for: note.id }, mine ? 'Note (required: why you withdraw it)' : 'Note (required: why you approve or reject it)', note),
    ...buttons,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const asker = event.submitter instanceof HTMLButtonElement ? event.submitter : buttons[0];
    decide(asker.value as Decision, asker);
  });
  return h(
    'div',
    { class: 'decide' },
    mine && h('p', { class: 'notice own' }, `You asked for this, so you may not approve it: ${APPROVERS[a.kind]} must. You may withdraw it.`),
    form,
    confirmSlot,
  );
}

const label = (choice: Decision, mine: boolean) => (choice === 'approve' ? 'Approve' : mine ? 'Withdraw' : 'Reject');
