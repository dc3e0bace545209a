import { api } from '../api';
import { facts, link, pill } from '../components/bits';
import { errorBox, shownOnce } from '../components/feedback';
import { FormValues, form } from '../components/form';
import { time } from '../components/format';
import { table } from '../components/table';
import { append, h } from '../dom';
import { go, hashWith, params, refresh } from '../navigation';
import type { ListPage, MerchantView, MerchantWithSecretView } from '../replies';

/** The merchants, searched by name and status, and onboarding: the new app secret is shown here once. */
export async function merchantsPage(main: HTMLElement) {
  const p = params();
  const created = h('div', { id: 'created' });
  main.append(
    h('h1', {}, 'Merchants'),
    form(
      [
        { name: 'name', label: 'Name contains', value: p.get('name') ?? '' },
        {
          name: 'status',
          label: 'Status',
          type: 'select',
          value: p.get('status') ?? '',
          options: [
            ['', 'any'],
            ['active', 'active'],
            ['suspended', 'suspended'],
          ],
        },
      ],
      'Search',
      (values) => go(hashWith('merchants', values)),
    ),
  );
  const query = new URLSearchParams([...p].filter(([k]) => ['name', 'status', 'cursor'].includes(k)));
  const reply = await api<ListPage<'merchants', MerchantView>>('GET', `/admin/v1/merchants?${query}`);
  if (!reply.ok) main.append(errorBox(reply));
  else
    append(
      main,
      table(
        [
          ['Name', (m) => link(`#/merchant/${m.merchant_id}`, m.name)],
          ['Merchant id', (m) => m.merchant_id],
          ['Status', (m) => pill(m.status)],
          ['Currency', (m) => m.currency],
          ['Callback URL', (m) => m.callback_url ?? '—'],
          ['Created', (m) => time(m.created_at)],
        ],
        reply.data.merchants,
        'No merchant matches.',
      ),
      reply.data.next_cursor !== null &&
        link(hashWith('merchants', { name: p.get('name'), status: p.get('status'), cursor: reply.data.next_cursor }), 'Next page →'),
    );
  main.append(
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'New merchant'),
      form(
        [
          { name: 'name', label: 'Name', required: true },
          { name: 'currency', label: 'Currency', value: 'USD', size: 4 },
          { name: 'callback_url', label: 'Callback URL', type: 'url', size: 40 },
          { name: 'ip_whitelist', label: 'IP whitelist (comma-separated, empty allows all)', size: 30 },
          { name: 'rate_limit_per_second', label: 'Rate limit /s', type: 'number', value: '100' },
        ],
        'Create merchant',
        async (values) => {
          const reply = await api<MerchantWithSecretView>('POST', '/admin/v1/merchants', merchantBody(values));
          if (!reply.ok) return created.replaceChildren(errorBox(reply));
          const m = reply.data;
          // Drawn again from fresh data: the list shows the new merchant, and the form its defaults (currency, rate limit) for the next one.
          await refresh();
          document.getElementById('created')?.replaceChildren(
            shownOnce(
              'App secret',
              m.app_secret,
              facts([
                ['Merchant', link(`#/merchant/${m.merchant_id}`, `${m.name} (${m.merchant_id})`)],
                ['API key', m.api_key],
              ]),
            ),
          );
        },
        { id: 'create-merchant' },
      ),
      created,
    ),
  );
}

/** A merchant's fields as the API takes them: the whitelist as a list, the rate limit as a number, an empty callback URL or threshold as none. */
export function merchantBody(values: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (values.name !== undefined) body.name = values.name;
  if (values.currency !== undefined) body.currency = values.currency;
  if ('callback_url' in values) body.callback_url = values.callback_url || null;
  if (values.ip_whitelist !== undefined) body.ip_whitelist = values.ip_whitelist.split(/[\s,]+/).filter(Boolean);
  if (values.rate_limit_per_second !== undefined) body.rate_limit_per_second = Number(values.rate_limit_per_second);
  if ('low_balance_threshold' in values) body.low_balance_threshold = values.low_balance_threshold || null;
  return body;
}
