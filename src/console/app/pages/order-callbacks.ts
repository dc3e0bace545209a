import { api, segment } from '../api';
import { row } from '../components/bits';
import { errorBox, outcome } from '../components/feedback';
import { count, time } from '../components/format';
import { table } from '../components/table';
import { h } from '../dom';
import type { CallbackLogView } from '../replies';

/** The callbacks sent to the merchant about a final order, and redelivery. */
export async function callbacksPanel(main: HTMLElement, orderNo: string) {
  main.append(h('h2', {}, 'Callbacks to the merchant'));
  const path = `/admin/v1/orders/${segment(orderNo)}/callbacks`;
  const reply = await api<CallbackLogView>('GET', path);
  if (reply.status === 404) return main.append(h('p', { class: 'muted' }, 'No callback: the order is not final yet.'));
  if (!reply.ok) return main.append(errorBox(reply));
  const log = reply.data;
  const slot = h('div');
  const redeliver = async () =>
    outcome(slot, await api<CallbackLogView>('POST', `${path}/redeliver`, {}), () => h('p', { class: 'ok' }, 'Redelivery scheduled. Reload to follow it.'));
  main.append(
    h('p', {}, `Delivery ${log.state}, ${count(log.attempts_made, 'attempt')}`, log.next_attempt_at ? `, next at ${time(log.next_attempt_at)}` : ''),
    table(
      [
        ['#', (a) => String(a.attempt), 'num'],
        ['At', (a) => time(a.at)],
        ['Kind', (a) => a.kind],
        ['URL', (a) => a.url],
        ['HTTP', (a) => (a.status_code === null ? '—' : String(a.status_code))],
        ['Acknowledged', (a) => (a.in_progress ? 'sending…' : a.acknowledged ? 'yes' : 'no')],
        ['Reply or error', (a) => a.error ?? a.reply_excerpt ?? ''],
      ],
      log.attempts,
      'No attempt yet.',
    ),
    row(h('button', { type: 'button', id: 'redeliver', onclick: redeliver }, 'Redeliver now')),
    slot,
  );
}
