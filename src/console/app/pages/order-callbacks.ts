import { api, segment } from '../api';
import { row } from '../components/bits';
import { errorBox, outcome } from '../components/feedback';
import { count, time } from '../components/format';
import { table } from '../components/table';
import { h } from '../dom';
import type { CallbackLogView, ListPage, OrderDetailView, OrderSummaryView } from '../replies';

/**
 * Whether the order's callback is scheduled: the orders read model shows
 * the order final in the same transaction as it schedules the callback. The
 * order's own stage, read from the event store, may be final a moment
 * sooner; asking for the callbacks then would only be refused.
 */
async function scheduled(orderNo: string): Promise<boolean> {
  const reply = await api<ListPage<'orders', OrderSummaryView>>('GET', `/admin/v1/orders?order_no=${segment(orderNo)}&limit=1`);
  const stage = reply.ok ? reply.data.orders[0]?.stage : undefined;
  return stage === 'succeeded' || stage === 'failed';
}

/** The callbacks sent to the merchant about a final order, and redelivery. */
export async function callbacksPanel(main: HTMLElement, order: OrderDetailView) {
  main.append(h('h2', {}, 'Callbacks to the merchant'));
  const orderNo = order.order_no;
  if (order.completed_at === null) return main.append(h('p', { class: 'muted' }, 'No callback: the order is not final yet.'));
  if (!(await scheduled(orderNo))) return main.append(h('p', { class: 'muted' }, 'The callback is being scheduled: reload in a moment.'));
  const path = `/admin/v1/orders/${segment(orderNo)}/callbacks`;
  const reply = await api<CallbackLogView>('GET', path);
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
