import { api } from '../api';
import { link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { Field, form } from '../components/form';
import { age, count, instantText, money } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { append, Child, h } from '../dom';
import { merchantChoice, merchantOptions } from '../lookups';
import { go, hashWith, params } from '../navigation';
import type { ListPage, OrderSummaryView, QueuePageView } from '../replies';
import { may } from '../session';
import { QueueFilter, QueueSelection } from './queue-selection';
import { reconciliationTabs } from './reconciliation-tabs';

const PAGE_SIZE = 50;

/** A row of the queue, whichever list it came from. */
interface Waiting {
  order_no: string;
  merchant_id: string;
  merchant_name: string | null;
  out_trade_no: string;
  amount: string;
  currency: string;
  waiting: number | null;
  reason: string | null;
}

/**
 * The reconciliation queue: orders whose upstream result is unknown, oldest
 * first, a page at a time; or, filtered by merchant and creation window,
 * those that match, newest first. Any of them, or all that match, go to a
 * bulk re-query job in one click.
 */
export async function queuePage(main: HTMLElement) {
  const p = params();
  const filter: QueueFilter = {
    merchant_id: p.get('merchant_id') ?? undefined,
    created_from: p.get('created_from') ?? undefined,
    created_to: p.get('created_to') ?? undefined,
  };
  const filtered = Object.values(filter).some(Boolean);
  main.append(h('h1', {}, 'Reconciliation queue'), reconciliationTabs('queue'), await filterForm(filter));
  const listed = filtered ? await matching(filter, p.get('cursor')) : await queue(Number(p.get('offset') ?? 0));
  if ('failure' in listed) return main.append(listed.failure);
  const { rows, total, pager } = listed;
  const selection = new QueueSelection(
    rows.map((o) => o.order_no),
    total,
    filter,
  );
  append(
    main,
    h(
      'p',
      { class: 'muted', id: 'queue-summary' },
      filtered
        ? 'Orders with an unknown upstream result that match the filter, newest first.'
        : `${count(total ?? 0, 'order')} with an unknown upstream result, oldest first. The money stays frozen until someone decides.`,
    ),
    rows.length > 0 && selection.bar(),
    table(
      [
        [selection.pageBox, (o) => selection.box(o.order_no), 'pick'],
        ['Order', (o) => link(`#/order/${o.order_no}`, o.order_no)],
        ['Merchant', (o) => named(o.merchant_name, o.merchant_id)],
        ['Out trade no', (o) => o.out_trade_no],
        ['Amount', (o) => money(o.amount, o.currency), 'num'],
        ['Waiting', (o) => (o.waiting === null ? '—' : age(o.waiting)), 'num'],
        ['Why unknown', (o) => o.reason ?? '—'],
      ],
      rows,
      filtered ? 'No order with an unknown result matches.' : 'The queue is empty.',
    ),
    pager,
  );
}

/** A page of rows, how many match in all (null: not known), and the links to the pages beside it; or why there is none. */
type Listed = { failure: HTMLElement } | { rows: Waiting[]; total: number | null; pager: Child };

/** The queue as it stands, oldest first, with the total waiting. */
async function queue(offset: number): Promise<Listed> {
  const reply = await api<QueuePageView>('GET', `/admin/v1/reconciliation/orders?limit=${PAGE_SIZE}&offset=${offset}`);
  if (!reply.ok) return { failure: errorBox(reply) };
  const { total, orders } = reply.data;
  return {
    total,
    rows: orders.map((o): Waiting => ({ ...o, waiting: o.age_seconds })),
    pager: row(
      offset > 0 && link(hashWith('queue', { offset: Math.max(0, offset - PAGE_SIZE) }), '← Previous'),
      offset + orders.length < total && link(hashWith('queue', { offset: offset + PAGE_SIZE }), 'Next →'),
    ),
  };
}

/** The orders of the queue that match the filter, from the order search (stage `unknown`), newest first; how many in all is not known. */
async function matching(filter: QueueFilter, cursor: string | null): Promise<Listed> {
  const query = new URLSearchParams({ stage: 'unknown', limit: String(PAGE_SIZE) });
  for (const [key, value] of Object.entries(filter)) if (value) query.set(key, value);
  if (cursor) query.set('cursor', cursor);
  const reply = await api<ListPage<'orders', OrderSummaryView>>('GET', `/admin/v1/orders?${query}`);
  if (!reply.ok) return { failure: errorBox(reply) };
  const now = Date.now();
  return {
    total: null,
    rows: reply.data.orders.map((o): Waiting => ({
      ...o,
      waiting: o.result_unknown_at ? Math.max(0, Math.floor((now - Date.parse(o.result_unknown_at)) / 1000)) : null,
      reason: null,
    })),
    pager: reply.data.next_cursor !== null && row(link(hashWith('queue', { ...filter, cursor: reply.data.next_cursor }), 'Next page →')),
  };
}

/** The filter: a merchant (chosen by name where the role may list them) and a creation window, in the address. */
async function filterForm(filter: QueueFilter) {
  const merchants = may() ? (await merchantOptions()).map(merchantChoice) : [];
  const merchant: Field =
    merchants.length > 0
      ? { name: 'merchant_id', label: 'Merchant', type: 'select', value: filter.merchant_id ?? '', options: [['', 'any'], ...merchants] }
      : { name: 'merchant_id', label: 'Merchant id', value: filter.merchant_id, size: 22 };
  return form(
    [
      merchant,
      { name: 'created_from', label: 'Created from (UTC)', type: 'instant', value: instantText(filter.created_from) },
      { name: 'created_to', label: 'Created before (UTC)', type: 'instant', value: instantText(filter.created_to) },
    ],
    'Filter',
    (values) => go(hashWith('queue', values)),
    { id: 'queue-filter' },
  );
}
