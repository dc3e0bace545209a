import { api } from '../api';
import { pill } from '../components/bits';
import { errorBox, shownOnce } from '../components/feedback';
import { form } from '../components/form';
import { time } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { h } from '../dom';
import { refresh } from '../navigation';
import type { CreatedStaffView, ListPage, StaffView, StaffWithTokenView } from '../replies';
import { currentSession } from '../session';

/** After the page is drawn again: the result of what was just done, in the fresh page's slot. */
async function refreshShowing(result: Node) {
  await refresh();
  document.getElementById('staff-result')?.replaceChildren(result);
}

/** The staff: create a member (the token shown once), rotate a member's token, disable a member. */
export async function staffPage(main: HTMLElement) {
  const reply = await api<ListPage<'staff', StaffView>>('GET', '/admin/v1/staff?limit=200');
  const slot = h('div', { id: 'staff-result' });
  main.append(h('h1', {}, 'Staff'), slot);
  if (!reply.ok) return main.append(errorBox(reply));
  const act =
    <T>(member: StaffView, action: 'token' | 'disable', question: string, render: (data: T) => Node) =>
    async () => {
      if (!confirm(question)) return;
      const r = await api<T>('POST', `/admin/v1/staff/${member.staff_id}/${action}`, {});
      if (!r.ok) return slot.replaceChildren(errorBox(r));
      await refreshShowing(render(r.data));
    };
  const actions = (s: StaffView) =>
    s.status === 'active' &&
    s.staff_id !== currentSession()?.staff_id &&
    h(
      'span',
      { class: 'row' },
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `Rotate token of ${s.name}`,
          onclick: act<StaffWithTokenView>(s, 'token', `Give ${s.name} a new token? The old one stops working at once.`, (d) =>
            shownOnce(`New token for ${d.name}`, d.token),
          ),
        },
        'Rotate token',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'aria-label': `Disable ${s.name}`,
          onclick: act<StaffView>(s, 'disable', `Disable ${s.name}? Their token and sessions stop working at once.`, (d) =>
            h('p', { class: 'ok', role: 'status' }, `${d.name} is disabled.`),
          ),
        },
        'Disable',
      ),
    );
  main.append(
    table(
      [
        ['Name', (s) => s.name],
        ['Staff id', (s) => s.staff_id],
        ['Role', (s) => s.role],
        ['Status', (s) => pill(s.status)],
        ['Created', (s) => h('span', {}, `${time(s.created_at)} by `, named(s.created_by_name, s.created_by))],
        ['Token rotated', (s) => time(s.token_rotated_at)],
        ['Actions', actions],
      ],
      reply.data.staff,
      'No staff member yet (the built-in administrator is not listed).',
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'New staff member'),
      form(
        [
          { name: 'name', label: 'Name', required: true },
          {
            name: 'role',
            label: 'Role',
            type: 'select',
            options: [
              ['reconciler', 'reconciler (clerk)'],
              ['auditor', 'auditor'],
              ['admin', 'admin (operator)'],
            ],
          },
        ],
        'Create',
        async (values) => {
          const r = await api<CreatedStaffView>('POST', '/admin/v1/staff', values);
          if (!r.ok) return slot.replaceChildren(errorBox(r));
          await refreshShowing(shownOnce(`Token for ${r.data.name}`, r.data.token));
        },
        { id: 'create-staff' },
      ),
    ),
  );
}
