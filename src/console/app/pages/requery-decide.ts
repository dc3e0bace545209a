import { segment } from '../api';
import { link, row } from '../components/bits';
import { count, money } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { h } from '../dom';
import type { RequeryResultView } from '../replies';
import type { PlannedOrder } from './bulk-apply';

/**
 * The orders the upstream says it never received: that argues for failed,
 * but the request may still be on its way to it, so a person decides each
 * (or all at once). One left undecided stays in the queue.
 */
export function decideList(results: readonly RequeryResultView[]): { element: HTMLElement; chosen: () => PlannedOrder[] } {
  const choices = new Map<RequeryResultView, HTMLSelectElement>();
  const select = (r: RequeryResultView) => {
    const el = h(
      'select',
      { name: `outcome-${r.order_no}`, 'aria-label': `Outcome of ${r.order_no}` },
      h('option', { value: '' }, 'undecided: leave it in the queue'),
      h('option', { value: 'failed' }, 'failed: release the money'),
      h('option', { value: 'success' }, 'success: deduct the money'),
    );
    choices.set(r, el);
    return el;
  };
  const setAll = (value: string) => () => choices.forEach((el) => (el.value = value));
  const element = h(
    'div',
    { id: 'decide', class: 'decide-list' },
    h('h3', {}, `${count(results.length, 'order')} the upstream never received: you decide`),
    results.length > 0 &&
      row(
        h('button', { type: 'button', class: 'secondary', id: 'decide-all-failed', onclick: setAll('failed') }, 'All as failed'),
        h('button', { type: 'button', class: 'secondary', id: 'decide-all-success', onclick: setAll('success') }, 'All as success'),
        h('button', { type: 'button', class: 'secondary', onclick: setAll('') }, 'All undecided'),
      ),
    table(
      [
        ['Order', (r) => link(`#/order/${segment(r.order_no)}`, r.order_no)],
        ['Merchant', (r) => named(r.merchant_name, r.merchant_id)],
        ['Amount', (r) => money(r.amount, r.currency), 'num'],
        ['Outcome', select],
      ],
      results,
      'None left to decide.',
    ),
  );
  const chosen = () =>
    [...choices].flatMap(([r, el]): PlannedOrder[] =>
      el.value === 'success' || el.value === 'failed'
        ? [{ order_no: r.order_no, outcome: el.value, amount: r.amount, currency: r.currency, chosen: true }]
        : [],
    );
  return { element, chosen };
}
