import { api } from '../api';
import { link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { age, count, money } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { h } from '../dom';
import { hashWith, params } from '../navigation';
import type { QueuePageView } from '../replies';

const PAGE_SIZE = 50;

/** The reconciliation queue: orders whose upstream result is unknown, oldest first, a page at a time. */
export async function queuePage(main: HTMLElement) {
  const offset = Number(params().get('offset') ?? 0);
  const reply = await api<QueuePageView>('GET', `/admin/v1/reconciliation/orders?limit=${PAGE_SIZE}&offset=${offset}`);
  main.append(h('h1', {}, 'Reconciliation queue'));
  if (!reply.ok) return main.append(errorBox(reply));
  const { total, orders } = reply.data;
  main.append(
    h('p', { class: 'muted' }, `${count(total, 'order')} with an unknown upstream result, oldest first. The money stays frozen until someone decides.`),
    table(
      [
        ['Order', (o) => link(`#/order/${o.order_no}`, o.order_no)],
        ['Merchant', (o) => named(o.merchant_name, o.merchant_id)],
        ['Out trade no', (o) => o.out_trade_no],
        ['Amount', (o) => money(o.amount, o.currency), 'num'],
        ['Waiting', (o) => age(o.age_seconds), 'num'],
        ['Why unknown', (o) => o.reason],
      ],
      orders,
      'The queue is empty.',
    ),
    row(
      offset > 0 && link(hashWith('queue', { offset: Math.max(0, offset - PAGE_SIZE) }), '← Previous'),
      offset + orders.length < total && link(hashWith('queue', { offset: offset + PAGE_SIZE }), 'Next →'),
    ),
  );
}
