import { api } from '../api';
import { link, pill, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { instantText, money, time } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { append, h } from '../dom';
import { go, hashWith, params } from '../navigation';
import type { ListPage, OrderSummaryView } from '../replies';

const ORDER_FILTERS = ['merchant_id', 'order_no', 'out_trade_no', 'account_id', 'status', 'stage', 'created_from', 'created_to'] as const;
const STAGES = ['placed', 'refused', 'accepted', 'sent', 'unknown', 'succeeding', 'failing', 'succeeded', 'failed'];

/** Order search: the filters in the address, so a search can be shared; newest first, a page at a time. */
export async function ordersPage(main: HTMLElement) {
  const p = params();
  const chosen = Object.fromEntries(ORDER_FILTERS.map((k) => [k, p.get(k) ?? undefined])) as Record<(typeof ORDER_FILTERS)[number], string | undefined>;
  main.append(
    h('h1', {}, 'Orders'),
    form(
      [
        { name: 'out_trade_no', label: 'Out trade no', value: chosen.out_trade_no },
        { name: 'order_no', label: 'Order no', value: chosen.order_no },
        { name: 'merchant_id', label: 'Merchant id', value: chosen.merchant_id },
        { name: 'account_id', label: 'Account id', value: chosen.account_id },
        {
          name: 'status',
          label: 'Status',
          type: 'select',
          value: chosen.status ?? '',
          options: [
            ['', 'any'],
            ['processing', 'processing'],
            ['success', 'success'],
            ['failed', 'failed'],
          ],
        },
        {
          name: 'stage',
          label: 'Internal stage',
          type: 'select',
          value: chosen.stage ?? '',
          options: [['', 'any'], ...STAGES.map((s): [string, string] => [s, s === 'unknown' ? 'unknown result' : s])],
        },
        { name: 'created_from', label: 'Created from (UTC)', type: 'instant', value: instantText(chosen.created_from) },
        { name: 'created_to', label: 'Created before (UTC)', type: 'instant', value: instantText(chosen.created_to) },
      ],
      'Search',
      (values) => go(hashWith('orders', values)),
      { id: 'order-search' },
    ),
  );
  const query = new URLSearchParams(Object.entries(chosen).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const cursor = p.get('cursor');
  if (cursor) query.set('cursor', cursor);
  const reply = await api<ListPage<'orders', OrderSummaryView>>('GET', `/admin/v1/orders?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  append(
    main,
    h('h2', {}, 'Results, newest first'),
    table(
      [
        ['Order', (o) => link(`#/order/${o.order_no}`, o.order_no)],
        ['Out trade no', (o) => o.out_trade_no],
        ['Merchant', (o) => named(o.merchant_name, o.merchant_id)],
        ['Account', (o) => o.account_id],
        ['Amount', (o) => money(o.amount, o.currency), 'num'],
        ['Status', (o) => o.status ?? '—'],
        ['Stage', (o) => pill(o.stage)],
        ['Created', (o) => time(o.created_at)],
      ],
      reply.data.orders,
      'No order matches.',
    ),
    reply.data.next_cursor !== null && row(link(hashWith('orders', { ...chosen, cursor: reply.data.next_cursor }), 'Next page →')),
  );
}
