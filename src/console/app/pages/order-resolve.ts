import { api } from '../api';
import { json, row } from '../components/bits';
import { fourEyesHint, gated, showWaiting } from '../components/approval-wait';
import { confirmIn } from '../components/confirm';
import { errorBox, outcome } from '../components/feedback';
import { form } from '../components/form';
import { h } from '../dom';
import { refresh } from '../navigation';
import type { ApprovalView, OrderDetailView, RequeryView } from '../replies';

/** Settling an unknown result: ask the upstream again, then resolve with a note, behind a confirmation that says what it does to the money. */
export function resolvePanel(order: OrderDetailView): HTMLElement {
  const panel = h('section', { class: 'card', id: 'resolve' }, h('h2', {}, 'Settle the unknown result'));
  const base = `/admin/v1/reconciliation/orders/${order.order_no}`;
  const requerySlot = h('div');
  const requery = async () =>
    outcome(requerySlot, await api<RequeryView>('POST', `${base}/requery`, {}), (d) =>
      h('div', { class: 'notice' }, `The upstream says: ${d.upstream.status}`, json(d.upstream)),
    );
  panel.append(row(h('button', { type: 'button', class: 'secondary', id: 'requery', onclick: requery }, 'Re-query the upstream')), requerySlot);

  const confirmSlot = h('div');
  panel.append(
    form(
      [
        {
          name: 'outcome',
          label: 'Outcome',
          type: 'select',
          // Either choice moves the money: none is made for the clerk.
          required: true,
          options: [
            ['', 'choose…'],
            ['success', 'Delivered: success (deducts the money)'],
            ['failed', 'Not delivered: failed (releases the money)'],
          ],
        },
        { name: 'note', label: 'Note (required: what shows the outcome)', type: 'textarea', required: true },
      ],
      'Resolve…',
      (values, resolveForm) => {
        const note = values.note;
        if (!note?.trim()) return confirmSlot.replaceChildren(h('div', { class: 'error', role: 'alert' }, 'A note is required.'));
        const chosen = values.outcome;
        confirmIn(confirmSlot, {
          question: `Resolve ${order.order_no} as ${chosen}?`,
          effect: `${order.amount} ${order.currency} will be ${chosen === 'success' ? 'deducted from' : 'released to'} merchant ${order.merchant_name ?? order.merchant_id}. This cannot be undone.`,
          more: [h('p', {}, `Note: ${note}`), fourEyesHint()],
          label: `Confirm: resolve as ${chosen}`,
          id: 'confirm-resolve',
          back: () => resolveForm.querySelector<HTMLElement>('button[type=submit]'),
          onConfirm: async (result) => {
            const reply = gated(await api<OrderDetailView | ApprovalView>('POST', `${base}/resolve`, { outcome: chosen, note }));
            if (!reply.ok) return result.replaceChildren(errorBox(reply));
            if (!reply.waiting) return refresh();
            // Over the approval threshold: a request, and the order still waits; nothing moved.
            resolveForm.reset();
            showWaiting(confirmSlot, reply.waiting);
          },
        });
      },
      { id: 'resolve-form' },
    ),
    confirmSlot,
  );
  return panel;
}
