import { api, segment } from '../api';
import { facts, pill } from '../components/bits';
import { eventCell, orderEventWords } from '../components/events';
import { errorBox } from '../components/feedback';
import { money, time } from '../components/format';
import { namedWithId } from '../components/names';
import { table } from '../components/table';
import { append, h } from '../dom';
import type { BalanceAsOf, OrderDetailView } from '../replies';
import { may } from '../session';
import { callbacksPanel } from './order-callbacks';
import { resolvePanel } from './order-resolve';

/** One order: its state, the merchant's wallet now, who resolved it, the timeline, and for clerks the resolution and the callbacks. */
export async function orderPage(main: HTMLElement, orderNo: string) {
  const reply = await api<OrderDetailView>('GET', `/admin/v1/orders/${segment(orderNo)}`);
  main.append(h('h1', {}, `Order ${orderNo}`));
  if (!reply.ok) return main.append(errorBox(reply));
  const o = reply.data;
  main.append(
    h(
      'section',
      { class: 'card' },
      facts([
        ['Status', statusAndStage(o)],
        ['Merchant', namedWithId(o.merchant_name, o.merchant_id)],
        ['Out trade no', o.out_trade_no],
        ['SKU', o.sku_id],
        ['Account', `${o.account_id} ${Object.keys(o.account_fields).length ? JSON.stringify(o.account_fields) : ''}`],
        ['Amount', money(o.amount, o.currency)],
        ['Upstream attempts', String(o.upstream_attempts)],
        ['Created', time(o.created_at)],
        ['Completed', time(o.completed_at)],
        o.fail_code && ['Failure', `${o.fail_code}: ${o.fail_reason}`],
      ]),
    ),
  );
  const wallet = await api<BalanceAsOf>('GET', `/admin/v1/wallets/${segment(o.merchant_id)}/balance`);
  if (wallet.ok) {
    const w = wallet.data;
    main.append(
      h('p', { id: 'wallet' }, `Merchant wallet now: balance ${w.balance} ${o.currency}, frozen ${w.frozen_balance}, available ${w.available_balance}`),
    );
  }
  const r = o.resolution;
  append(
    main,
    r &&
      h(
        'section',
        { class: 'card', id: 'resolution' },
        h('h2', {}, 'Resolved by staff'),
        facts([
          ['Outcome', r.outcome],
          ['Resolved by', namedWithId(r.resolved_by_name, r.resolved_by)],
          ['When', time(r.resolved_at)],
          ['Why', r.note],
        ]),
      ),
    o.stage === 'unknown' && may('reconciler') && resolvePanel(o),
    h('h2', {}, 'Timeline'),
    table(
      [
        ['#', (e) => String(e.revision), 'num'],
        ['Recorded', (e) => time(e.recorded_at)],
        ['Event', (e) => e.type],
        ['What happened', (e) => eventCell(orderEventWords(e), 'The event', e)],
      ],
      o.history,
    ),
  );
  if (may('reconciler')) await callbacksPanel(main, o);
}

/** The merchant's status and, while it is processing, the internal stage that says more; a final order's status once (`failed`, not `failed failed`). */
function statusAndStage(o: OrderDetailView) {
  if (o.status === 'success' || o.status === 'failed') return pill(o.status);
  return h('span', {}, o.status ?? '—', ' ', pill(o.stage));
}
