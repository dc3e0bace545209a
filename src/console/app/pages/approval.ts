import { api, segment } from '../api';
import { link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { h } from '../dom';
import type { ApprovalView } from '../replies';
import { refreshPendingCount } from '../shell';
import { approvalCard } from './approval-card';

/** One request, read from its own stream (so a decision shows at once): where a "waiting for approval" notice links to. */
export async function approvalPage(main: HTMLElement, approvalId: string) {
  const reply = await api<ApprovalView>('GET', `/admin/v1/approvals/${segment(approvalId)}`);
  main.append(h('h1', {}, `Request ${approvalId}`), row(link('#/approvals', '← All requests')));
  if (!reply.ok) return main.append(errorBox(reply));
  const show = (a: ApprovalView): HTMLElement => {
    const card = approvalCard(a, (updated) => {
      const fresh = show(updated);
      card.replaceWith(fresh);
      fresh.focus();
      void refreshPendingCount();
    });
    return card;
  };
  main.append(show(reply.data));
}
