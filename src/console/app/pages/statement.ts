import { api, segment } from '../api';
import { facts, link, row } from '../components/bits';
import { balanceChart } from '../components/chart';
import { eventCell, walletLineWords } from '../components/events';
import { errorBox, outcome } from '../components/feedback';
import { form } from '../components/form';
import { instantText, time } from '../components/format';
import { table } from '../components/table';
import { h } from '../dom';
import { merchantChoice, merchantOptions } from '../lookups';
import { go, hashWith, params } from '../navigation';
import type { BalanceAsOf, ChainStatus, Statement } from '../replies';

/** A wallet's statement for auditors: a window, pages of lines with a chart, the downloads, the hash chain and the balance as of an instant. */
export async function statementPage(main: HTMLElement) {
  const p = params();
  const merchantId = p.get('merchant_id') ?? '';
  const from = p.get('from') ?? undefined;
  const to = p.get('to') ?? undefined;
  const merchants = await merchantOptions();
  main.append(
    h('h1', {}, 'Wallet statement'),
    form(
      [
        { name: 'merchant_id', label: 'Merchant', type: 'select', value: merchantId, options: [['', 'choose…'], ...merchants.map(merchantChoice)] },
        { name: 'from', label: 'From (UTC)', type: 'instant', value: instantText(from) },
        { name: 'to', label: 'Before (UTC)', type: 'instant', value: instantText(to) },
      ],
      'Show',
      (values) => go(hashWith('statement', { merchant_id: values.merchant_id, from: values.from, to: values.to })),
      { id: 'statement-form' },
    ),
  );
  if (!merchantId) return;
  if (from || to) main.append(h('p', { class: 'muted' }, `Window: ${from ? time(from) : 'the start'} to ${to ? time(to) : 'now'}`));
  const windowQuery = Object.fromEntries(Object.entries({ from, to }).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const base = `/admin/v1/wallets/${segment(merchantId)}`;
  const download = (format: 'csv' | 'json') =>
    h(
      'a',
      {
        href: `${base}/statement/export?${new URLSearchParams({ ...windowQuery, format })}`,
        download: `statement-${merchantId}.${format}`,
        id: `download-${format}`,
      },
      `Download ${format.toUpperCase()}`,
    );
  const chainSlot = h('div', { id: 'chain' }, h('p', { class: 'muted' }, 'Checking the hash chain…'));
  main.append(
    row(download('csv'), download('json'), h('span', { class: 'muted' }, 'The whole window, as ', h('code', {}, 'npm run verify-statement'), ' checks it.')),
    chainSlot,
  );
  const query = new URLSearchParams(windowQuery);
  const after = p.get('after_revision');
  if (after) query.set('after_revision', after);
  query.set('limit', '50');
  const reply = await api<Statement>('GET', `${base}/statement?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  const { lines, next_after_revision: next } = reply.data;
  main.append(
    h('h2', {}, 'Balance and frozen amount over this page'),
    balanceChart(lines),
    h('h2', {}, `Lines${after ? ` after revision ${after}` : ''}`),
    table(
      [
        ['Rev', (l) => String(l.revision), 'num'],
        ['Recorded', (l) => time(l.recorded_at)],
        ['Event', (l) => eventCell(walletLineWords(l), l.type, l.data)],
        ['Order / reference', (l) => (l.order_no ? link(`#/order/${l.order_no}`, l.order_no) : (l.reference ?? ''))],
        ['Amount', (l) => l.amount ?? '', 'num'],
        ['Balance', (l) => l.balance_after, 'num'],
        ['Frozen', (l) => l.frozen_after, 'num'],
        ['Available', (l) => l.available_after, 'num'],
        ['Hash', (l) => h('span', { class: 'mono', title: l.hash }, l.hash.slice(0, 12))],
      ],
      lines,
      'No line in this window.',
    ),
    row(
      after && link(hashWith('statement', { merchant_id: merchantId, from, to }), '← First page'),
      next !== null && link(hashWith('statement', { merchant_id: merchantId, from, to, after_revision: next }), 'Next page →'),
    ),
    balanceAsOfPanel(base),
  );
  const chain = await api<ChainStatus>('GET', `${base}/chain`);
  outcome(chainSlot, chain, (c) =>
    h(
      'div',
      { class: c.intact ? 'passed' : 'error' },
      c.intact
        ? h('span', { class: 'ok' }, `Hash chain intact: ${c.events_checked} events, last hash ${(c.last_hash ?? '—').slice(0, 16)}…`)
        : `Hash chain BROKEN at revision ${c.first_break?.revision}: ${c.first_break?.problem}`,
    ),
  );
}

function balanceAsOfPanel(base: string): HTMLElement {
  const slot = h('div');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Balance as of an instant'),
    form(
      [{ name: 'at', label: 'At (UTC, to the second)', type: 'instant', required: true }],
      'Show balance',
      async (values) =>
        outcome(slot, await api<BalanceAsOf>('GET', `${base}/balance?at=${encodeURIComponent(values.at ?? '')}`), (b) =>
          facts([
            ['As of', time(b.as_of?.at)],
            ['Balance', b.balance],
            ['Frozen', b.frozen_balance],
            ['Available', b.available_balance],
            ['Events applied', String(b.events_applied)],
          ]),
        ),
      { id: 'balance-form' },
    ),
    slot,
  );
}
