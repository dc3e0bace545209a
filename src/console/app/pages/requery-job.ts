import { api, segment } from '../api';
import { facts, link, pill, row } from '../components/bits';
import { announce, errorBox } from '../components/feedback';
import { count, money, time } from '../components/format';
import { named } from '../components/names';
import { ANSWER_WORDS, appliedCell, filterWords, PROPOSAL_WORDS } from '../components/reconciliation-words';
import { table } from '../components/table';
import { append, h } from '../dom';
import { hashWith, params } from '../navigation';
import type { RequeryJobView, RequeryProposal, RequeryResultView } from '../replies';
import { may } from '../session';
import { ApplyPlan, bulkApplyPanel, everyPage, PlannedOrder } from './bulk-apply';
import { reconciliationTabs } from './reconciliation-tabs';
import { decideList } from './requery-decide';

const PAGE_SIZE = 100;
const PROPOSALS: readonly RequeryProposal[] = ['success', 'failed', 'leave', 'decide'];

/**
 * One bulk re-query job: its progress, redrawn every second while the
 * upstream is being asked; once every order has its answer, the answers
 * grouped by what they propose, and, for a clerk, the apply.
 */
export async function requeryJobPage(main: HTMLElement, jobId: string) {
  const base = `/admin/v1/reconciliation/requery/${segment(jobId)}`;
  const progress = h('section', { class: 'card', id: 'job-progress', 'aria-labelledby': 'job-progress-title' });
  main.append(h('h1', {}, `Re-query job ${jobId}`), reconciliationTabs('requery'), progress);
  let waited = false;
  for (;;) {
    const reply = await api<RequeryJobView>('GET', `${base}?limit=1`);
    if (!reply.ok) return progress.replaceChildren(errorBox(reply));
    drawProgress(progress, reply.data);
    if (reply.data.status === 'done') break;
    // Only while its page is shown.
    if (!progress.isConnected || !location.hash.startsWith(`#/requery/${jobId}`)) return;
    waited = true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (waited) announce(`Re-query job done: every order has the upstream's answer.`);
  await drawResults(main, base);
}

/** Who started it, what it took, a progress bar with its figures in words, and the answers so far. */
function drawProgress(section: HTMLElement, j: RequeryJobView) {
  const asked = `${j.done} of ${count(j.total, 'order')} asked`;
  section.replaceChildren(
    h('h2', { id: 'job-progress-title' }, j.status === 'done' ? 'Every order asked' : 'Asking the upstream…'),
    facts([
      ['Status', pill(j.status)],
      ['Orders', filterWords(j.filter)],
      ['Started by', h('span', {}, named(j.requested_by_name, j.requested_by), ` at ${time(j.created_at)}`)],
      j.finished_at !== null && ['Finished', time(j.finished_at)],
      j.not_in_queue.length > 0 && [
        'Not in the queue',
        `${j.not_in_queue.length} of the orders listed: ${j.not_in_queue.slice(0, 20).join(', ')}${j.not_in_queue.length > 20 ? '…' : ''}`,
      ],
    ]),
    j.total > 0
      ? row(h('progress', { id: 'job-bar', max: j.total, value: j.done, 'aria-labelledby': 'job-asked' }), h('span', { id: 'job-asked' }, asked))
      : h('p', { class: 'muted' }, 'No order of the queue matched: nothing to ask.'),
    h(
      'p',
      { id: 'job-answers' },
      'The upstream said: ',
      Object.entries(j.upstream)
        .map(([answer, n]) => `${ANSWER_WORDS[answer as keyof typeof ANSWER_WORDS]} ${n}`)
        .join(', '),
      '.',
    ),
  );
}

/** The answers grouped by proposal (one group at a time, with the counts), a page of the orders, and the apply. */
async function drawResults(main: HTMLElement, base: string) {
  const p = params();
  const chosen = PROPOSALS.find((x) => x === p.get('proposal'));
  const offset = Number(p.get('offset') ?? 0);
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset), ...(chosen ? { proposal: chosen } : {}) });
  const reply = await api<RequeryJobView>('GET', `${base}?${query}`);
  if (!reply.ok) return main.append(errorBox(reply));
  const j = reply.data;
  const here = (values: Record<string, string | number | undefined>) => hashWith(`requery/${j.job_id}`, values);
  const group = (proposal: RequeryProposal | undefined, text: string, n: number) =>
    h('a', { href: here({ proposal }), class: proposal === chosen ? 'current' : undefined, 'aria-current': proposal === chosen && 'page' }, `${text} (${n})`);
  append(
    main,
    // The apply first: what a clerk came for; the orders one by one under it.
    may('reconciler') && j.proposals.success + j.proposals.failed + j.proposals.decide > 0 && (await applyPanel(base, j)),
    h('h2', {}, 'Answers, grouped by what they propose'),
    h(
      'nav',
      { class: 'tabs groups', 'aria-label': 'Proposals' },
      group(undefined, 'All', j.total),
      PROPOSALS.map((x) => group(x, PROPOSAL_WORDS[x], j.proposals[x])),
    ),
    table(
      [
        ['#', (r) => String(r.item), 'num'],
        ['Order', (r) => link(`#/order/${segment(r.order_no)}`, r.order_no)],
        ['Merchant', (r) => named(r.merchant_name, r.merchant_id)],
        ['Amount', (r) => money(r.amount, r.currency), 'num'],
        ['The upstream said', (r) => (r.upstream === null ? 'not asked yet' : ANSWER_WORDS[r.upstream.status])],
        ['Proposal', (r) => (r.proposal === null ? '—' : pill(r.proposal))],
        ['Applied', (r) => appliedCell(r.applied)],
      ],
      j.results,
      'No order in this group.',
    ),
    row(
      offset > 0 && link(here({ proposal: chosen, offset: Math.max(0, offset - PAGE_SIZE) }), '← Previous'),
      offset + j.results.length < j.page.total && link(here({ proposal: chosen, offset: offset + PAGE_SIZE }), 'Next →'),
    ),
  );
}

/** The orders of a proposal that no apply has taken yet. */
const unapplied = (base: string, proposal: RequeryProposal) =>
  everyPage<RequeryResultView>(async (limit, offset) => {
    const reply = await api<RequeryJobView>('GET', `${base}?proposal=${proposal}&limit=${limit}&offset=${offset}`);
    return reply.ok ? { items: reply.data.results, total: reply.data.page.total } : undefined;
  }).then((all) => all?.filter((r) => r.applied === null));

/** The apply: every definitive proposal not applied yet, and the orders the upstream never received as the clerk decides each. */
async function applyPanel(base: string, j: RequeryJobView) {
  const decide = j.proposals.decide > 0 ? decideList((await unapplied(base, 'decide')) ?? []) : undefined;
  const plan = async (): Promise<ApplyPlan> => {
    const [success, failed] = await Promise.all([unapplied(base, 'success'), unapplied(base, 'failed')]);
    if (!success || !failed) return 'The job’s answers could not be read: try again.';
    const planned = (r: RequeryResultView, outcome: 'success' | 'failed'): PlannedOrder => ({
      order_no: r.order_no,
      outcome,
      amount: r.amount,
      currency: r.currency,
    });
    const chosen = decide?.chosen() ?? [];
    const orders = [...success.map((r) => planned(r, 'success')), ...failed.map((r) => planned(r, 'failed')), ...chosen];
    if (orders.length === 0) return 'Nothing to apply: every definitive proposal is applied already, and no order the upstream never received is decided.';
    if (chosen.length > 0 && orders.length > 10_000) return 'At most 10,000 orders in one apply when some are decided by hand: decide fewer at a time.';
    return { orders, named: chosen.length > 0 };
  };
  return bulkApplyPanel({
    path: `${base}/apply`,
    title: 'Apply the proposals',
    label: 'Apply the proposals…',
    plan,
    more: [
      h(
        'p',
        { class: 'muted' },
        `Resolves every order the upstream answered definitively (${j.proposals.success} delivered: success, ${j.proposals.failed} refused: failed), with the answer as evidence. Orders it is still working on, or gave no clear answer about, stay in the queue.`,
      ),
      decide?.element,
    ],
  });
}
