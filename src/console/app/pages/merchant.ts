import { api, Reply, segment } from '../api';
import { facts, link, pill, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { time } from '../components/format';
import { named } from '../components/names';
import { h } from '../dom';
import { hashWith, refresh } from '../navigation';
import type { BalanceAsOf, DepositView, ListPage, MerchantView, PriceListView } from '../replies';
import { may } from '../session';
import { adjustmentCard } from './adjustment-panel';
import { depositPanel, pricesPanel, secretPanel } from './merchant-panels';
import { merchantBody } from './merchants';

/** One merchant for an operator: its settings, suspension, the app secret's rotation, deposits, adjustments and prices. */
export async function merchantPage(main: HTMLElement, merchantId: string) {
  const base = `/admin/v1/merchants/${segment(merchantId)}`;
  const [reply, wallet, prices]: [Reply<MerchantView>, Reply<BalanceAsOf>, Reply<ListPage<'prices', PriceListView>>] = await Promise.all([
    api<MerchantView>('GET', base),
    api<BalanceAsOf>('GET', `/admin/v1/wallets/${segment(merchantId)}/balance`),
    api<ListPage<'prices', PriceListView>>('GET', `${base}/prices?limit=200`),
  ]);
  main.append(h('h1', {}, reply.ok ? reply.data.name : merchantId));
  if (!reply.ok) return main.append(errorBox(reply));
  const m = reply.data;
  const slot = h('div', { id: 'merchant-result' });
  // The wallet as of the last change this page made: a deposit below redraws it, so the page never shows two balances.
  const walletNow = h('span', { id: 'merchant-wallet' });
  let available: string | undefined;
  const showWallet = (w: Pick<DepositView, 'balance' | 'frozen_balance' | 'available_balance'>) => {
    available = w.available_balance;
    walletNow.replaceChildren(`${w.balance} ${m.currency} (frozen ${w.frozen_balance}, available ${w.available_balance})`);
  };
  if (wallet.ok) showWallet(wallet.data);
  const toggleStatus = async () => {
    const to = m.status === 'active' ? 'suspended' : 'active';
    if (to === 'suspended' && !confirm(`Suspend ${m.name}? Its API requests are refused until it is reactivated.`)) return;
    const r = await api<MerchantView>('PATCH', base, { status: to });
    if (r.ok) await refresh();
    else slot.replaceChildren(errorBox(r));
  };
  main.append(
    h(
      'section',
      { class: 'card' },
      facts([
        ['Merchant id', m.merchant_id],
        ['Status', pill(m.status)],
        ['API key', h('span', { class: 'mono' }, m.api_key)],
        ['Callback URL', m.callback_url],
        ['IP whitelist', m.ip_whitelist.length ? m.ip_whitelist.join(', ') : 'any address'],
        ['Rate limit', `${m.rate_limit_per_second} requests/s`],
        ['Low-balance alert under', m.low_balance_threshold === null ? 'none' : `${m.low_balance_threshold} ${m.currency}`],
        ['Previous secret valid until', m.previous_secret_valid_until ? time(m.previous_secret_valid_until) : 'no overlap'],
        wallet.ok && ['Wallet', walletNow],
        ['Updated', h('span', {}, `${time(m.updated_at)} by `, named(m.updated_by_name, m.updated_by))],
      ]),
      row(
        link(hashWith('orders', { merchant_id: m.merchant_id }), 'Orders'),
        may('auditor') && link(hashWith('statement', { merchant_id: m.merchant_id }), 'Statement'),
        h(
          'button',
          { type: 'button', class: m.status === 'active' ? 'danger' : undefined, id: 'toggle-status', onclick: toggleStatus },
          m.status === 'active' ? 'Suspend' : 'Reactivate',
        ),
      ),
      slot,
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Settings'),
      form(
        [
          { name: 'callback_url', label: 'Callback URL (empty removes it)', type: 'url', value: m.callback_url ?? '', size: 40 },
          { name: 'ip_whitelist', label: 'IP whitelist (comma-separated)', value: m.ip_whitelist.join(', '), size: 30 },
          { name: 'rate_limit_per_second', label: 'Rate limit /s', type: 'number', value: String(m.rate_limit_per_second) },
          {
            name: 'low_balance_threshold',
            label: `Low-balance alert under (${m.currency}; empty: none)`,
            value: m.low_balance_threshold ?? '',
            placeholder: '500.00',
            size: 10,
          },
        ],
        'Save',
        async (values) => {
          const body = merchantBody({
            callback_url: values.callback_url ?? '',
            ip_whitelist: values.ip_whitelist ?? '',
            rate_limit_per_second: values.rate_limit_per_second,
            low_balance_threshold: values.low_balance_threshold ?? '',
          });
          const r = await api<MerchantView>('PATCH', base, body);
          if (r.ok) await refresh();
          else slot.replaceChildren(errorBox(r));
        },
        { id: 'merchant-settings' },
      ),
    ),
    secretPanel(base, m),
    depositPanel(merchantId, showWallet),
    adjustmentCard({ merchantId, merchantName: m.name, currency: m.currency, available: () => available }, ({ wallet: w }) => showWallet(w)),
    pricesPanel(base, prices),
  );
}
