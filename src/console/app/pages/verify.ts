import { api } from '../api';
import { outcome } from '../components/feedback';
import { form } from '../components/form';
import { count } from '../components/format';
import { table } from '../components/table';
import { h } from '../dom';
import { merchantChoice, merchantOptions } from '../lookups';
import type { VerificationReport } from '../replies';

/** Replays the log, for one wallet or all, and compares it with the read models; lists each difference with the event that explains it. */
export async function verifyPage(main: HTMLElement) {
  const merchants = await merchantOptions();
  const slot = h('div', { id: 'verification' });
  main.append(
    h('h1', {}, 'Verify the read models against the events'),
    h('p', { class: 'muted' }, 'Replays the event store with the deciders that wrote it and compares the result with the tables the APIs read. Read-only.'),
    form(
      [
        { name: 'merchant_id', label: 'Wallet', type: 'select', options: [['', 'all wallets (the whole log)'], ...merchants.map(merchantChoice)] },
        {
          name: 'scope',
          label: 'Scope (one wallet)',
          type: 'select',
          options: [
            ['', 'wallet and its orders'],
            ['wallet', 'wallet only'],
          ],
        },
      ],
      'Run verification',
      async (values) => {
        slot.replaceChildren(h('p', { class: 'muted' }, 'Verifying…'));
        const body = values.merchant_id ? { merchant_id: values.merchant_id, ...(values.scope ? { scope: values.scope } : {}) } : {};
        outcome(slot, await api<VerificationReport>('POST', '/admin/v1/audit/verify', body), report);
      },
      { id: 'verify-form' },
    ),
    slot,
  );
}

function report(r: VerificationReport): HTMLElement {
  return h(
    'div',
    {},
    h(
      'p',
      { class: r.clean ? 'ok' : 'bad' },
      r.clean
        ? `Clean: ${r.events_checked} events checked up to ${r.last_position}, no difference.`
        : `${count(r.differences_total, 'difference')} in ${r.events_checked} events.`,
    ),
    !r.clean &&
      table(
        [
          ['Table', (d) => d.table],
          ['Key', (d) => JSON.stringify(d.key)],
          ['Column', (d) => d.column ?? ''],
          ['Expected', (d) => JSON.stringify(d.expected)],
          ['Actual', (d) => JSON.stringify(d.actual)],
          ['Explained by', (d) => (d.explained_by ? `${d.explained_by.type} rev ${d.explained_by.revision} @ ${d.explained_by.position}` : '')],
        ],
        r.differences,
      ),
  );
}
