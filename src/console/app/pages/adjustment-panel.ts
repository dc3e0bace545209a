import { api, segment } from '../api';
import { fourEyesHint, gated, showWaiting } from '../components/approval-wait';
import { confirmIn } from '../components/confirm';
import { announce, errorBox } from '../components/feedback';
import { Field, form } from '../components/form';
import { fromMinor, minorUnits } from '../components/format';
import { h } from '../dom';
import type { AdjustedWalletView, ApprovalView, DepositView } from '../replies';

/** Whose wallet an adjustment moves, and, from an order's page, the final order it corrects. */
export interface AdjustmentTarget {
  merchantId: string;
  merchantName: string | null;
  currency: string;
  /** The wallet's available balance as the page shows it now, to say what the adjustment makes of it. */
  available: () => string | undefined;
  order?: { orderNo: string; amount: string; status: string };
}

/** The reasons a reconciliation team gives most; any code of capitals, digits and underscores is taken. */
const REASONS = ['UPSTREAM_REPORT_FAILED', 'UPSTREAM_REPORT_DELIVERED', 'AMOUNT_MISMATCH', 'DUPLICATE_DEPOSIT', 'DEPOSIT_CORRECTION'];

/**
 * A credit or a debit on a merchant's wallet outside any order's hold: how
 * a final order that the upstream's report contradicts is put right (the
 * order stays final). Behind a confirmation that says which way the money
 * goes and what it makes of the available balance; over the approval
 * threshold it becomes a request for an administrator. `adjusted` is told
 * the wallet and the adjustment once it is made.
 */
export function adjustmentPanel(target: AdjustmentTarget, adjusted: (done: AdjustedWalletView) => void): HTMLElement {
  const slot = h('div', { class: 'adjustment-result' });
  const confirmSlot = h('div');
  const order = target.order;
  const merchant = target.merchantName ?? target.merchantId;
  const fields: Field[] = [
    {
      name: 'direction',
      label: 'Direction',
      type: 'select',
      // Either way moves money: none is chosen for the clerk.
      required: true,
      options: [
        ['', 'choose…'],
        ['credit', `Credit: money to ${merchant}`],
        ['debit', `Debit: money from ${merchant}`],
      ],
    },
    { name: 'amount', label: `Amount (${target.currency})`, required: true, placeholder: '1.20', size: 10, value: order?.amount },
    {
      name: 'reason',
      label: 'Reason (a code)',
      required: true,
      placeholder: 'UPSTREAM_REPORT_FAILED',
      pattern: '[A-Z][A-Z0-9_]{0,63}',
      title: 'A code: capital letters, digits and _, starting with a letter, e.g. UPSTREAM_REPORT_FAILED',
      suggestions: REASONS,
      size: 28,
    },
    { name: 'reference', label: 'Reference (a repeat of it changes nothing)', required: true, size: 24, value: order && `adj-${order.orderNo}` },
    ...(order ? [] : [{ name: 'order_no', label: 'Order it corrects (optional)', size: 28 }]),
    { name: 'note', label: 'Note (required: what shows it, for the statement and the auditors)', type: 'textarea', required: true },
  ];
  const adjustForm = form(
    fields,
    'Adjust…',
    (values, f) => {
      const note = values.note?.trim();
      if (!note) return confirmSlot.replaceChildren(h('div', { class: 'error', role: 'alert' }, 'A note is required.'));
      const credit = values.direction === 'credit';
      const amount = `${values.amount} ${target.currency}`;
      const orderNo = order?.orderNo ?? values.order_no;
      const body = { direction: values.direction, amount: values.amount, reason: values.reason, note, reference: values.reference, order_no: orderNo };
      confirmIn(confirmSlot, {
        question: `${credit ? 'Credit' : 'Debit'} ${amount} ${credit ? 'to' : 'from'} ${merchant}?`,
        effect: [
          `The wallet’s balance and available balance go ${credit ? 'up' : 'down'} by ${amount}`,
          availableAfter(target.available(), values.amount, credit, target.currency),
          `, for ${values.reason}${orderNo ? `, correcting order ${orderNo}` : ''}.`,
          order ? ` The order stays ${order.status}; the merchant gets no callback.` : '',
          credit ? '' : ' A debit never takes the available balance below zero.',
        ].join(''),
        more: [h('p', {}, `Reference ${values.reference}. Note: ${note}`), fourEyesHint()],
        label: `Confirm: ${credit ? 'credit' : 'debit'} ${amount}`,
        id: 'confirm-adjustment',
        back: () => f.querySelector<HTMLElement>('button[type=submit]'),
        onConfirm: async (result) => {
          const reply = gated(await api<AdjustedWalletView | ApprovalView>('POST', `/admin/v1/wallets/${segment(target.merchantId)}/adjustments`, body));
          if (!reply.ok) return result.replaceChildren(errorBox(reply));
          confirmSlot.replaceChildren();
          f.reset();
          if (reply.waiting) return showWaiting(slot, reply.waiting);
          const shown = done(reply.data.wallet, reply.data.adjustment.direction, amount, merchant);
          slot.replaceChildren(shown);
          shown.focus();
          announce(shown.textContent ?? '');
          adjusted(reply.data);
        },
      });
    },
    { id: 'adjust-wallet' },
  );
  return h('div', { class: 'adjustment' }, adjustForm, confirmSlot, slot);
}

/** The merchant page's card: an adjustment of the wallet, naming an order or not. */
export const adjustmentCard = (target: AdjustmentTarget, adjusted: (done: AdjustedWalletView) => void) =>
  h(
    'section',
    { class: 'card', id: 'adjustment' },
    h('h2', {}, 'Wallet adjustment'),
    h(
      'p',
      { class: 'muted' },
      'A credit or a debit outside any order: to put right an order the upstream’s report contradicts after it became final (name the order), or a deposit made twice. It is a line of its own on the statement.',
    ),
    adjustmentPanel(target, adjusted),
  );

/** ` (available now 98.80, then 100.00 USD)`, when the page knows the balance and the amount is one. */
function availableAfter(available: string | undefined, amount: string | undefined, credit: boolean, currency: string): string {
  const now = minorUnits(available);
  const by = minorUnits(amount);
  if (now === undefined || by === undefined) return '';
  return ` (available now ${available}, then ${fromMinor(credit ? now + by : now - by)} ${currency})`;
}

const done = (wallet: DepositView, direction: 'credit' | 'debit', amount: string, merchant: string) =>
  h(
    'p',
    { class: 'ok', id: 'adjusted', tabindex: -1 },
    `${direction === 'credit' ? 'Credited' : 'Debited'} ${amount} ${direction === 'credit' ? 'to' : 'from'} ${merchant}. Balance ${wallet.balance} ${wallet.currency}, available ${wallet.available_balance}.`,
  );
