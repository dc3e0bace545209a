import { api, Reply, segment } from '../api';
import { link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { form } from '../components/form';
import { count, time } from '../components/format';
import { named } from '../components/names';
import { CATEGORY_WORDS } from '../components/reconciliation-words';
import { table } from '../components/table';
import { h } from '../dom';
import { go, hashWith, params } from '../navigation';
import type { ListPage, ReportCategory, ReportRejectedEnvelope, UpstreamReportSummaryView, UpstreamReportView } from '../replies';
import { may } from '../session';
import { reconciliationTabs } from './reconciliation-tabs';

/** The largest report the service takes. */
const MAX_BYTES = 10 * 1024 * 1024;

/** The upstream's transaction reports: upload one, or fetch one from the upstream for a window; those received, newest first. */
export async function reportsPage(main: HTMLElement) {
  main.append(h('h1', {}, 'Upstream reports'), reconciliationTabs('reports'));
  if (may('reconciler')) main.append(uploadCard(), fetchCard());
  const cursor = params().get('cursor');
  const reply = await api<ListPage<'reports', UpstreamReportSummaryView>>(
    'GET',
    `/admin/v1/reconciliation/reports?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
  );
  main.append(h('h2', {}, 'Reports received, newest first'));
  if (!reply.ok) return main.append(errorBox(reply));
  main.append(
    table(
      [
        ['Report', (r) => link(`#/report/${segment(r.report_id)}`, r.file_name ?? r.report_id)],
        ['From', (r) => (r.source === 'upload' ? 'uploaded' : 'the upstream')],
        ['Received', (r) => h('span', {}, time(r.received_at), ' by ', named(r.received_by_name, r.received_by))],
        ['Window (UTC)', (r) => (r.window ? `${time(r.window.from)} to ${time(r.window.to)}` : '—')],
        ['Lines', (r) => String(r.lines), 'num'],
        ['Result', (r) => (r.valid ? countsWords(r.counts) : h('span', { class: 'bad' }, `${count(r.error_count, 'error')}: never applied`))],
      ],
      reply.data.reports,
      'No report yet.',
    ),
    row(reply.data.next_cursor !== null && link(hashWith('reports', { cursor: reply.data.next_cursor }), 'Next page →')),
  );
}

/** "3 matched, 120 resolvable, ..." */
export const countsWords = (counts: Record<ReportCategory, number>) =>
  Object.entries(counts)
    .map(([category, n]) => `${n} ${CATEGORY_WORDS[category as ReportCategory].toLowerCase()}`)
    .join(', ');

/**
 * Opens the report the service kept: a new one, the same one again
 * (DUPLICATE), or one with errors, which is kept as evidence and shows them.
 */
function opened(slot: HTMLElement, reply: Reply<UpstreamReportView>) {
  if (reply.ok) return go(`#/report/${reply.data.report_id}`);
  const rejected = reply.body.code === 'REPORT_INVALID' ? (reply.body as ReportRejectedEnvelope) : undefined;
  if (rejected) return go(`#/report/${rejected.report_id}`);
  slot.replaceChildren(errorBox(reply));
}

/** A file the provider sent, as it is: sent as the request's body (text/csv), never read by the page. */
function uploadCard() {
  const slot = h('div');
  const file = h('input', { type: 'file', id: 'report-file', name: 'file', accept: '.csv,text/csv', required: true });
  const upload = h(
    'form',
    { class: 'fields', id: 'upload-report' },
    h('label', { for: file.id }, 'CSV file (at most 10 MB)', file),
    h('button', { type: 'submit' }, 'Upload and match'),
  );
  upload.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return file.reportValidity();
    if (chosen.size > MAX_BYTES)
      return slot.replaceChildren(h('p', { class: 'error', role: 'alert' }, `${chosen.name} is over 10 MB: the service takes at most 10 MB.`));
    const path = `/admin/v1/reconciliation/reports?${new URLSearchParams({ file_name: chosen.name })}`;
    opened(slot, await api<UpstreamReportView>('POST', path, { raw: chosen, type: 'text/csv' }));
  });
  return h(
    'section',
    { class: 'card', id: 'upload' },
    h('h2', {}, 'Upload a report'),
    h(
      'p',
      { class: 'muted' },
      'The provider’s transaction report: order_no, status (delivered or failed), amount, currency, reference, completed_at, one line each.',
    ),
    upload,
    slot,
  );
}

/** The upstream's own report of a window, asked for by the service. */
function fetchCard() {
  const slot = h('div');
  const hourAgo = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000).toISOString().replace('.000Z', 'Z');
  return h(
    'section',
    { class: 'card', id: 'fetch' },
    h('h2', {}, 'Fetch the report from the upstream'),
    form(
      [
        { name: 'from', label: 'From (UTC)', type: 'instant', required: true, value: hourAgo },
        {
          name: 'to',
          label: 'Before (UTC)',
          type: 'instant',
          required: true,
          value: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
        },
      ],
      'Fetch and match',
      async (values) => opened(slot, await api<UpstreamReportView>('POST', '/admin/v1/reconciliation/reports/fetch', values)),
      { id: 'fetch-report' },
    ),
    slot,
  );
}
