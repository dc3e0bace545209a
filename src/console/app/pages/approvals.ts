import { api } from '../api';
import { link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { count } from '../components/format';
import { KIND_WORDS } from '../components/approval-words';
import { h } from '../dom';
import { go, hashWith, params } from '../navigation';
import type { ApprovalKind, ApprovalPageView, ApprovalView } from '../replies';
import { refreshPendingCount } from '../shell';
import { approvalCard } from './approval-card';

const PAGE_SIZE = 20;
const STATUSES = ['pending', 'approved', 'rejected', 'failed'] as const;

/**
 * The four-eyes inbox: requests to move money that wait for a second
 * person, the waiting ones first, each with what it would move and who
 * asked; decided ones say who decided, why, and what came of it. Filters by
 * status and kind in the address, a page at a time.
 */
export async function approvalsPage(main: HTMLElement) {
  const p = params();
  const chosen = { status: p.get('status') ?? '', kind: p.get('kind') ?? '' };
  const offset = Number(p.get('offset') ?? 0);
  main.append(
    h('h1', {}, 'Approvals'),
    h(
      'p',
      { class: 'muted' },
      'Deposits, resolutions, adjustments and bulk applies over the approval threshold wait here until a second person approves them. Nothing moves until then.',
    ),
    form(
      [
        {
          name: 'status',
          label: 'Status',
          type: 'select',
          value: chosen.status,
          options: [['', 'any (waiting first)'], ...STATUSES.map((s): [string, string] => [s, s])],
        },
        {
          name: 'kind',
          label: 'Kind',
          type: 'select',
          value: chosen.kind,
          options: [['', 'any'], ...Object.entries(KIND_WORDS).map(([k, words]): [string, string] => [k, words])],
        },
      ],
      'Filter',
      (values) => go(hashWith('approvals', values)),
      { id: 'approval-filter' },
    ),
  );
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
  if (chosen.status) query.set('status', chosen.status);
  if (chosen.kind) query.set('kind', chosen.kind);
  const reply = await api<ApprovalPageView>('GET', `/admin/v1/approvals?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  const { total, approvals } = reply.data;
  const list = h('div', { id: 'approvals' });
  // A decision redraws its card where it is, so the list keeps its place, and the count in the navigation follows.
  const cardOf = (a: ApprovalView): HTMLElement => {
    const card = approvalCard(a, (updated) => {
      const fresh = cardOf(updated);
      card.replaceWith(fresh);
      fresh.focus();
      void refreshPendingCount();
    });
    return card;
  };
  list.append(...approvals.map(cardOf));
  main.append(
    h(
      'p',
      { id: 'approvals-total' },
      `${count(total, 'request')}${chosen.status ? ` ${chosen.status}` : ''}${chosen.kind ? `, ${KIND_WORDS[chosen.kind as ApprovalKind].toLowerCase()}` : ''}.`,
    ),
    approvals.length === 0 ? h('p', { class: 'muted' }, 'No request matches.') : list,
    row(
      offset > 0 && link(hashWith('approvals', { ...chosen, offset: Math.max(0, offset - PAGE_SIZE) }), '← Previous'),
      offset + approvals.length < total && link(hashWith('approvals', { ...chosen, offset: offset + PAGE_SIZE }), 'Next →'),
    ),
  );
}
