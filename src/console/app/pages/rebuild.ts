import { api, segment } from '../api';
import { pill } from '../components/bits';
import { announce, errorBox } from '../components/feedback';
import { form } from '../components/form';
import { time } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { h } from '../dom';
import { go, hashWith, params } from '../navigation';
import type { RebuildStartedView, RebuildView, StatusView } from '../replies';

/** Starts an online rebuild of one read model or all of them, and follows the one named in the address. */
export async function rebuildPage(main: HTMLElement) {
  const status = await api<StatusView>('GET', '/admin/v1/status');
  // What the rebuild route takes, as the service says: the workflow queues are fed from the log too, but are not rebuilt.
  const names = status.ok ? status.data.projections.filter((p) => p.rebuildable).map((p) => p.name) : [];
  const slot = h('div', { id: 'rebuild-progress' });
  main.append(
    h('h1', {}, 'Rebuild the read models'),
    h('p', { class: 'muted' }, 'Replays the whole log into fresh tables while the service keeps answering from the live ones, then swaps them in.'),
    form(
      [
        {
          name: 'projection',
          label: 'Projection',
          type: 'select',
          options: [['', `all of them (${names.join(', ')})`], ...names.map((n): [string, string] => [n, n])],
        },
      ],
      'Start rebuild',
      async (values) => {
        const reply = await api<RebuildStartedView>('POST', '/admin/v1/projections/rebuild', values.projection ? { projection: values.projection } : {});
        if (!reply.ok) return slot.replaceChildren(errorBox(reply));
        go(hashWith('rebuild', { id: reply.data.rebuild_id }));
      },
      { id: 'start-rebuild' },
    ),
    slot,
  );
  const id = params().get('id');
  if (id) await follow(slot, id);
}

/** Redraws the rebuild's progress every second while it runs and its page is shown. */
async function follow(slot: HTMLElement, id: string) {
  for (;;) {
    const reply = await api<RebuildView>('GET', `/admin/v1/projections/rebuild/${segment(id)}`);
    if (!reply.ok) return slot.replaceChildren(errorBox(reply));
    const r = reply.data;
    slot.replaceChildren(
      h(
        'section',
        { class: 'card' },
        h(
          'p',
          {},
          `Rebuild ${r.rebuild_id}: `,
          pill(r.status),
          ` started ${time(r.started_at)} by `,
          named(r.requested_by_name, r.requested_by),
          r.finished_at ? `, finished ${time(r.finished_at)}` : '',
        ),
        r.error && h('p', { class: 'error', role: 'alert' }, r.error),
        table(
          [
            ['Projection', (p) => p.name],
            ['Events replayed', (p) => String(p.events), 'num'],
            ['Position', (p) => p.position ?? '—'],
          ],
          r.projections,
        ),
      ),
    );
    if (r.status !== 'running') return announce(`Rebuild ${r.status}.`);
    if (!location.hash.includes(id)) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
