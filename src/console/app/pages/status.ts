import { api } from '../api';
import { facts, link } from '../components/bits';
import { errorBox } from '../components/feedback';
import { age, clockOffset, time } from '../components/format';
import { table } from '../components/table';
import { h } from '../dom';
import { refresh } from '../navigation';
import type { StatusView } from '../replies';

/** The service now: its instances' upstream slots, each read model's lag behind the log, the backlogs, and the oldest order waiting for a person. */
export async function statusPage(main: HTMLElement) {
  const reply = await api<StatusView>('GET', '/admin/v1/status');
  main.append(h('h1', {}, 'Service status'), h('button', { type: 'button', class: 'secondary', onclick: refresh }, 'Refresh'));
  if (!reply.ok) return main.append(errorBox(reply));
  const s = reply.data;
  const oldest = s.reconciliation.oldest;
  main.append(
    h('p', { class: 'muted' }, `As of ${time(s.at)}`),
    h('h2', {}, 'Instances'),
    table(
      [
        ['Instance', (i) => i.instance],
        ['Started', (i) => time(i.started_at)],
        ['Last seen', (i) => time(i.seen_at)],
        ['Clock vs the database', (i) => clockOffset(i.clock_offset_ms), 'num'],
        ['Upstream slots', (i) => String(i.fulfilment.slots), 'num'],
        ['Held now', (i) => String(i.fulfilment.in_flight), 'num'],
        ['Held on average', (i) => i.fulfilment.held.toFixed(1), 'num'],
        ['Callback slots', (i) => String(i.callbacks.slots), 'num'],
      ],
      s.instances,
    ),
    h('h2', {}, 'Projections'),
    table(
      [
        ['Projection', (p) => p.name],
        ['Position', (p) => p.position],
        ['Events behind', (p) => `${p.events_behind_at_least ? '≥ ' : ''}${p.events_behind}`, 'num'],
        ['Last applied', (p) => time(p.updated_at)],
      ],
      s.projections,
    ),
    h('h2', {}, 'Backlogs'),
    facts([
      ['Fulfilment', `${s.fulfilment.pending} pending (${s.fulfilment.retrying} retrying), oldest due ${time(s.fulfilment.oldest_due_at)}`],
      ['Callbacks', `${s.callbacks.pending} pending, ${s.callbacks.exhausted} gave up, oldest due ${time(s.callbacks.oldest_due_at)}`],
      [
        'Unknown results',
        h(
          'span',
          {},
          `${s.reconciliation.unknown_result_orders} waiting`,
          oldest ? [', oldest ', link(`#/order/${oldest.order_no}`, oldest.order_no), ` for ${age(oldest.age_seconds)}`] : '',
        ),
      ],
    ]),
  );
}
