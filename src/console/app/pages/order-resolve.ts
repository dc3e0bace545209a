import { api } from '../api';
import { json, row } from '../components/bits';
import { errorBox, outcome } from '../components/feedback';
import { form } from '../components/form';
import { h } from '../dom';
import { refresh } from '../navigation';
import type { OrderDetailView, RequeryView } from '../replies';

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
        const result = h('div');
        const resolve = async () => {
          const reply = await api<OrderDetailView>('POST', `${base}/resolve`, { outcome: chosen, note });
          if (reply.ok) return refresh();
          result.replaceChildren(errorBox(reply));
        };
        confirmSlot.replaceChildren(
          h(
            'div',
            // Takes the focus, so a screen reader reads the question and what it does; Tab goes on to the buttons.
            { class: 'confirm', role: 'alertdialog', 'aria-labelledby': 'confirm-question', 'aria-describedby': 'confirm-effect', tabindex: -1 },
            h(
              'p',
              { id: 'confirm-effect' },
              h('strong', { id: 'confirm-question' }, `Resolve ${order.order_no} as ${chosen}?`),
              ` ${order.amount} ${order.currency} will be ${chosen === 'success' ? 'deducted from' : 'released to'} merchant ${order.merchant_name ?? order.merchant_id}. This cannot be undone.`,
            ),
            h('p', {}, `Note: ${note}`),
            row(
              h('button', { type: 'button', class: 'danger', id: 'confirm-resolve', onclick: resolve }, `Confirm: resolve as ${chosen}`),
              h('button', { type: 'button', class: 'secondary', onclick: () => cancel(confirmSlot, resolveForm) }, 'Cancel'),
            ),
            result,
          ),
        );
        confirmSlot.querySelector<HTMLElement>('.confirm')?.focus();
      },
      { id: 'resolve-form' },
    ),
    confirmSlot,
  );
  return panel;
}

/** Takes the confirmation away, and gives the focus back to the button that asked for it. */
function cancel(confirmSlot: HTMLElement, resolveForm: HTMLFormElement) {
  confirmSlot.replaceChildren();
  resolveForm.querySelector<HTMLElement>('button[type=submit]')?.focus();
}
