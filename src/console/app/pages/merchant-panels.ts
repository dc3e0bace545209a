import { api, Reply, segment } from '../api';
import { row } from '../components/bits';
import { gated, showWaiting } from '../components/approval-wait';
import { announce, errorBox, outcome, shownOnce } from '../components/feedback';
import { form } from '../components/form';
import { age, instantText, time } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { append, h } from '../dom';
import { refresh } from '../navigation';
import type { ApprovalView, DepositView, ListPage, MerchantView, MerchantWithSecretView, PriceListView, PriceView } from '../replies';

/** A new app secret, shown once, with an overlap during which the old one still verifies. */
export function secretPanel(base: string, m: MerchantView): HTMLElement {
  const slot = h('div', { id: 'rotated' });
  const endOverlap = async () => {
    const r = await api<MerchantView>('DELETE', `${base}/app-secret/previous`);
    if (r.ok) await refresh();
    else slot.replaceChildren(errorBox(r));
  };
  const panel = h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Rotate the app secret'),
    h(
      'p',
      { class: 'muted' },
      'The new secret is shown once and signs callbacks at once. The old one keeps verifying the merchant’s requests until the time you choose (at most 30 days), then stops.',
    ),
    form(
      [
        {
          name: 'until',
          label: 'The old secret keeps working until (UTC)',
          type: 'instant',
          value: instantText(new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000).toISOString()),
        },
        { name: 'now', label: 'Stop the old secret at once (it leaked)', type: 'checkbox' },
      ],
      'Rotate secret',
      async (values, _form, checks) => {
        const overlap = checks.now || !values.until ? 0 : Math.max(0, Math.round((new Date(values.until).getTime() - Date.now()) / 1000));
        const stops = overlap === 0 ? 'The old secret stops at once.' : `The old secret keeps working for ${age(overlap)}.`;
        if (!confirm(`Rotate the app secret of ${m.name}? ${stops}`)) return;
        const reply = await api<MerchantWithSecretView>('POST', `${base}/app-secret`, { overlap_seconds: overlap });
        outcome(slot, reply, (d) =>
          shownOnce(
            'New app secret',
            d.app_secret,
            h(
              'p',
              {},
              d.previous_secret_valid_until
                ? `The previous secret verifies until ${time(d.previous_secret_valid_until)}.`
                : 'The previous secret no longer verifies anything.',
            ),
          ),
        );
      },
      { id: 'rotate-secret' },
    ),
  );
  append(panel, m.previous_secret_valid_until && row(h('button', { type: 'button', class: 'secondary', onclick: endOverlap }, 'End the overlap now')), slot);
  return panel;
}

/** Money in: a deposit with the bank transfer's reference, which makes a repeated request harmless; `deposited` shows the wallet after it. */
export function depositPanel(merchantId: string, deposited: (wallet: DepositView) => void): HTMLElement {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Deposit'),
    form(
      [
        { name: 'amount', label: 'Amount', required: true, placeholder: '100.00' },
        { name: 'reference', label: 'Reference (bank transfer id)', required: true, size: 30 },
        { name: 'note', label: 'Note (for the approver, when one is needed)', size: 30 },
      ],
      'Deposit',
      async (values, f) => {
        const reply = gated(await api<DepositView | ApprovalView>('POST', `/admin/v1/merchants/${segment(merchantId)}/deposits`, values));
        if (!reply.ok) return slot.replaceChildren(errorBox(reply));
        f.reset();
        // Over the approval threshold: a request for another administrator, and the wallet as it was.
        if (reply.waiting) return showWaiting(slot, reply.waiting);
        deposited(reply.data);
        const done = h('p', { class: 'ok' }, `Deposited. Balance ${reply.data.balance} ${reply.data.currency}, available ${reply.data.available_balance}.`);
        slot.replaceChildren(done);
        announce(done.textContent ?? '');
      },
      { id: 'deposit' },
    ),
    slot,
  );
}

/** The merchant's price list, and setting a price. */
export function pricesPanel(base: string, prices: Reply<ListPage<'prices', PriceListView>>): HTMLElement {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Prices'),
    prices.ok
      ? table(
          [
            ['SKU', (p) => p.sku_id],
            ['Name', (p) => p.sku_name],
            ['Price', (p) => p.price, 'num'],
            ['On shelf', (p) => (p.on_shelf ? 'yes' : 'no')],
            ['Updated', (p) => h('span', {}, `${time(p.updated_at)} by `, named(p.updated_by_name, p.updated_by))],
          ],
          prices.data.prices,
          'No price: the merchant can order nothing yet.',
        )
      : errorBox(prices),
    form(
      [
        { name: 'sku_id', label: 'SKU id', required: true },
        { name: 'price', label: 'Price', required: true, placeholder: '1.20' },
      ],
      'Set price',
      async (values) => {
        const reply = await api<PriceView>('PUT', `${base}/prices/${segment(values.sku_id ?? '')}`, { price: values.price });
        if (reply.ok) await refresh();
        else slot.replaceChildren(errorBox(reply));
      },
      { id: 'set-price' },
    ),
    slot,
  );
}
