import { api, segment } from '../api';
import { facts, link, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { count, money, time } from '../components/format';
import { named } from '../components/names';
import { appliedCell, CATEGORY_WORDS, REASON_WORDS } from '../components/reconciliation-words';
import { table } from '../components/table';
import { append, h } from '../dom';
import { hashWith, params } from '../navigation';
import type { ReportCategory, ReportItemView, UpstreamReportView } from '../replies';
import { may } from '../session';
import { ApplyPlan, bulkApplyPanel, everyPage } from './bulk-apply';
import { reconciliationTabs } from './reconciliation-tabs';

const PAGE_SIZE = 100;
const CATEGORIES = Object.keys(CATEGORY_WORDS) as ReportCategory[];

/**
 * One upstream report: as received (who, when, its checksum), its errors
 * line by line when it has any, its items by category with counts and
 * pages, the CSV export for the finance team, and the apply of its
 * resolvable orders.
 */
export async function reportPage(main: HTMLElement, reportId: string) {
  const p = params();
  const chosen = CATEGORIES.find((c) => c === p.get('category'));
  const offset = Number(p.get('offset') ?? 0);
  const base = `/admin/v1/reconciliation/reports/${segment(reportId)}`;
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset), ...(chosen ? { category: chosen } : {}) });
  const reply = await api<UpstreamReportView>('GET', `${base}?${query}`);
  main.append(h('h1', {}, `Upstream report ${reply.ok && reply.data.file_name ? reply.data.file_name : reportId}`), reconciliationTabs('reports'));
  if (!reply.ok) return main.append(errorBox(reply));
  const r = reply.data;
  const here = (values: Record<string, string | number | undefined>) => hashWith(`report/${r.report_id}`, values);
  const tab = (category: ReportCategory | undefined, text: string, n: number) =>
    h('a', { href: here({ category }), class: category === chosen ? 'current' : undefined, 'aria-current': category === chosen && 'page' }, `${text} (${n})`);
  const exportLink = (category?: ReportCategory) =>
    h(
      'a',
      {
        href: `${base}/export${category ? `?category=${category}` : ''}`,
        download: `report-${r.report_id}${category ? `-${category}` : ''}.csv`,
        id: `export-${category ?? 'all'}`,
      },
      category ? `Download the ${CATEGORY_WORDS[category].toLowerCase()} as CSV` : 'Download every item as CSV',
    );
  append(
    main,
    h(
      'section',
      { class: 'card', id: 'report-facts' },
      facts([
        ['Report', h('span', { class: 'mono' }, r.report_id)],
        ['From', r.source === 'upload' ? `uploaded as ${r.file_name ?? 'a file'}` : 'fetched from the upstream'],
        ['Received', h('span', {}, time(r.received_at), ' by ', named(r.received_by_name, r.received_by))],
        ['Window (UTC)', r.window ? `${time(r.window.from)} to ${time(r.window.to)}` : '—'],
        ['Size', `${r.valid ? `${count(r.lines, 'line')}, ` : ''}${r.size_bytes} bytes, SHA-256 ${r.sha256}`],
        // The evidence a resolution's reportId points to, unchanged: for comparing with the provider's own file, not for a spreadsheet.
        [
          'As received',
          h('a', { href: `${base}/original`, download: r.file_name ?? `${r.report_id}.csv`, id: 'report-original' }, 'Download the original file'),
        ],
      ]),
    ),
    !r.valid && errors(r),
    r.valid && [
      may('reconciler') && r.counts.resolvable > 0 && applyPanel(base, r),
      h(
        'nav',
        { class: 'tabs groups', 'aria-label': 'Categories' },
        tab(
          undefined,
          'All',
          Object.values(r.counts).reduce((a, b) => a + b, 0),
        ),
        CATEGORIES.map((c) => tab(c, CATEGORY_WORDS[c], r.counts[c])),
      ),
      row(exportLink(chosen), chosen && exportLink(), h('span', { class: 'muted' }, 'Cells a spreadsheet would run as formulas start with a quote.')),
      itemsTable(r.items),
      row(
        offset > 0 && link(here({ category: chosen, offset: Math.max(0, offset - PAGE_SIZE) }), '← Previous'),
        offset + r.items.length < r.page.total && link(here({ category: chosen, offset: offset + PAGE_SIZE }), 'Next →'),
      ),
    ],
  );
}

/** A malformed report: kept as evidence, never applied; each problem with its line and column. */
const errors = (r: UpstreamReportView) =>
  h(
    'section',
    { class: 'card', id: 'report-errors' },
    h(
      'p',
      { class: 'error', role: 'alert' },
      `This report has ${count(r.error_count, 'error')}: it is kept as received, but nothing in it can be applied. Ask the provider for a corrected file.`,
    ),
    table(
      [
        ['Line', (e) => String(e.line), 'num'],
        ['Column', (e) => e.column ?? '—'],
        ['What is wrong', (e) => e.message],
      ],
      r.errors,
    ),
    r.error_count > r.errors.length && h('p', { class: 'muted' }, `The first ${r.errors.length} of ${r.error_count} are shown.`),
  );

const side = (status: string | null | undefined, amount: string | undefined, currency: string | undefined) =>
  status === undefined ? '—' : `${status ?? '—'}, ${amount && currency ? money(amount, currency) : '—'}`;

const itemsTable = (items: readonly ReportItemView[]) =>
  table(
    [
      ['Line', (i) => (i.line === null ? '—' : String(i.line)), 'num'],
      ['Order', (i) => (i.ours ? link(`#/order/${segment(i.order_no)}`, i.order_no) : i.order_no)],
      ['Merchant', (i) => (i.merchant_id === null ? '—' : named(i.merchant_name, i.merchant_id))],
      ['Category', (i) => `${CATEGORY_WORDS[i.category]}: ${REASON_WORDS[i.reason]}`],
      ['Ours', (i) => side(i.ours?.status ?? i.ours?.stage, i.ours?.amount, i.ours?.currency)],
      [
        'Theirs',
        (i) => (i.theirs ? `${side(i.theirs.status, i.theirs.amount, i.theirs.currency)}${i.theirs.reference ? `, ${i.theirs.reference}` : ''}` : '—'),
      ],
      ['Proposal', (i) => i.proposal ?? '—'],
      ['Applied', (i) => appliedCell(i.applied)],
    ],
    items,
    'No item in this category.',
  );

/** The resolvable orders no apply has taken yet, each as its line says. */
function applyPanel(base: string, r: UpstreamReportView) {
  const plan = async (): Promise<ApplyPlan> => {
    const items = await everyPage<ReportItemView>(async (limit, offset) => {
      const reply = await api<UpstreamReportView>('GET', `${base}?category=resolvable&limit=${limit}&offset=${offset}`);
      return reply.ok ? { items: reply.data.items, total: reply.data.page.total } : undefined;
    });
    if (!items) return 'The report’s items could not be read: try again.';
    const orders = items.flatMap((i) =>
      i.applied === null && i.proposal && i.ours ? [{ order_no: i.order_no, outcome: i.proposal, amount: i.ours.amount, currency: i.ours.currency }] : [],
    );
    return orders.length === 0 ? 'Nothing to apply: every resolvable order is applied already.' : { orders, named: false };
  };
  return bulkApplyPanel({
    path: `${base}/apply`,
    title: 'Apply the resolvable orders',
    label: 'Apply the resolvable ones…',
    plan,
    more: h(
      'p',
      { class: 'muted' },
      `Resolves the ${count(r.counts.resolvable, 'order')} whose result we do not know and the report settles (${r.proposals.success} delivered: success, ${r.proposals.failed} failed), each with its line as evidence. Exceptions are for a person: a wallet adjustment on the order’s page.`,
    ),
  });
}
