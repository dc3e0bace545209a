import { api, segment } from '../api';
import { money, time } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { append, h } from '../dom';
import type { DepositView, OrderAdjustmentView, OrderDetailView } from '../replies';
import { may } from '../session';
import { adjustmentPanel } from './adjustment-panel';

/** The order's adjustments, oldest first: which way, how much, why, who asked and who approved. */
const adjustmentsTable = (o: OrderDetailView, rows: readonly OrderAdjustmentView[]) =>
  table(
    [
      ['When', (a) => time(a.at)],
      ['Direction', (a) => a.direction],
      ['Amount', (a) => money(a.amount, o.currency), 'num'],
      ['Reason', (a) => a.reason],
      ['Note', (a) => a.note],
      ['By', (a) => named(a.adjusted_by_name, a.adjusted_by)],
      ['Approved by', (a) => (a.approved_by === null ? 'no second person needed' : named(a.approved_by_name, a.approved_by))],
      ['Reference', (a) => a.reference],
    ],
    rows,
    'No adjustment: the wallet moved for this order only as the order did.',
  );

/**
 * The wallet adjustments that correct a final order (the order itself stays
 * final), and, for a clerk, a new one with the order named. The list comes
 * from the statement's read model, so a new adjustment shows in it a moment
 * after it is made: the section reads the order again until it does.
 */
export function adjustmentsSection(o: OrderDetailView, wallet: { available: () => string | undefined; show: (w: DepositView) => void }): HTMLElement | false {
  const list = h('div', { id: 'adjustments-list' }, adjustmentsTable(o, o.adjustments));
  const section = h(
    'section',
    { class: 'card', id: 'adjustments', 'aria-labelledby': 'adjustments-title' },
    h('h2', { id: 'adjustments-title' }, 'Wallet adjustments'),
    list,
  );
  if (o.completed_at === null || !may('reconciler')) return o.adjustments.length > 0 && section;
  const follow = async (reference: string) => {
    for (let i = 0; i < 25; i++) {
      const reply = await api<OrderDetailView>('GET', `/admin/v1/orders/${segment(o.order_no)}`);
      if (reply.ok && reply.data.adjustments.some((a) => a.reference === reference)) return list.replaceChildren(adjustmentsTable(o, reply.data.adjustments));
      if (!list.isConnected) return;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  };
  append(
    section,
    h(
      'details',
      { id: 'correct-order' },
      h('summary', {}, 'Correct this order with a wallet adjustment…'),
      h(
        'p',
        { class: 'muted' },
        `The order stays ${o.status}. If the upstream’s report says otherwise (we deducted, they failed it; we released, they delivered it), put the money right on the merchant’s wallet, naming this order: at most once per reason.`,
      ),
      adjustmentPanel(
        {
          merchantId: o.merchant_id,
          merchantName: o.merchant_name,
          currency: o.currency,
          available: wallet.available,
          order: { orderNo: o.order_no, amount: o.amount, status: o.status ?? o.stage },
        },
        (done) => {
          wallet.show(done.wallet);
          void follow(done.adjustment.reference);
        },
      ),
    ),
  );
  return section;
}
