import { api, segment } from '../api';
import { facts, pill } from '../components/bits';
import { waitingNotice } from '../components/approval-wait';
import { eventCell, evidenceWords, orderEventWords } from '../components/events';
import { errorBox } from '../components/feedback';
import { money, time } from '../components/format';
import { namedWithId } from '../components/names';
import { table } from '../components/table';
import { append, h } from '../dom';
import type { ApprovalPageView, BalanceAsOf, OrderDetailView } from '../replies';
import { may } from '../session';
import { adjustmentsSection } from './order-adjustments';
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
  // The wallet as of the last change this page made: an adjustment below redraws it.
  const walletNow = h('p', { id: 'wallet' });
  let available: string | undefined;
  const showWallet = (w: Pick<BalanceAsOf, 'balance' | 'frozen_balance' | 'available_balance'>) => {
    available = w.available_balance;
    walletNow.replaceChildren(`Merchant wallet now: balance ${w.balance} ${o.currency}, frozen ${w.frozen_balance}, available ${w.available_balance}`);
  };
  if (wallet.ok) {
    showWallet(wallet.data);
    main.append(walletNow);
  }
  const r = o.resolution;
  const evidence = evidenceWords(r?.evidence);
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
          r.approved_by !== undefined && ['Approved by', namedWithId(r.approved_by_name ?? null, r.approved_by)],
          ['When', time(r.resolved_at)],
          ['Why', r.note],
          evidence !== undefined && ['Evidence', evidence],
        ]),
      ),
    o.stage === 'unknown' && may('reconciler') && (await waitingResolution(o.order_no)),
    o.stage === 'unknown' && may('reconciler') && resolvePanel(o),
    adjustmentsSection(o, { available: () => available, show: showWallet }),
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

/** A resolution of the order that waits for a second person, said above the form: resolving it again would only ask again. */
async function waitingResolution(orderNo: string) {
  const reply = await api<ApprovalPageView>('GET', '/admin/v1/approvals?status=pending&kind=resolution&limit=200');
  const waiting = reply.ok ? reply.data.approvals.find((a) => a.payload.order_no === orderNo) : undefined;
  return waiting && waitingNotice(waiting);
}
