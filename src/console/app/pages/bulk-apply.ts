import { api, segment } from '../api';
import { fourEyesHint, gated, showWaiting } from '../components/approval-wait';
import { facts, link } from '../components/bits';
import { confirmIn } from '../components/confirm';
import { announce, errorBox } from '../components/feedback';
import { count, fromMinor, minorUnits } from '../components/format';
import { named } from '../components/names';
import { table } from '../components/table';
import { Child, h } from '../dom';
import { refresh } from '../navigation';
import type { ApprovalView, BulkApplyView } from '../replies';

type Outcome = 'success' | 'failed';

/** An order a bulk apply would resolve: how, and for how much. */
export interface PlannedOrder {
  order_no: string;
  outcome: Outcome;
  amount: string;
  currency: string;
  /** Chosen by the clerk (a `decide` answer), so the apply must be told the outcome. */
  chosen?: boolean;
}

/** What an apply will do, as the page can tell before it asks: the orders, or why there is nothing to apply. */
export type ApplyPlan =
  { orders: PlannedOrder[]; /** Whether the apply names its orders (some were chosen) rather than taking every proposal. */ named: boolean } | string;

/** Per outcome, the orders and the money per currency: "120 orders as success: 144.00 USD deducted". */
export function planLines(orders: readonly PlannedOrder[]): string[] {
  return (['success', 'failed'] as const).flatMap((outcome) => {
    const these = orders.filter((o) => o.outcome === outcome);
    if (these.length === 0) return [];
    const sums = new Map<string, bigint>();
    for (const o of these) sums.set(o.currency, (sums.get(o.currency) ?? 0n) + (minorUnits(o.amount) ?? 0n));
    const money = [...sums].map(([currency, sum]) => `${fromMinor(sum)} ${currency}`).join(' and ');
    const chosen = these.filter((o) => o.chosen).length;
    return [
      `${count(these.length, 'order')} resolved as ${outcome}${chosen ? ` (${chosen} of them as you chose)` : ''}: ${money} ${outcome === 'success' ? 'deducted from the frozen funds (delivered)' : 'released to the available balances (not delivered)'}.`,
    ];
  });
}

/**
 * Applying proposals in one call: a required note, then a confirmation
 * that says how many orders are resolved each way and how much money that
 * deducts and releases per currency; over the approval threshold the apply
 * becomes one request for a second person. `plan` is asked when the clerk
 * asks to apply, so it counts what is there to apply then.
 */
export function bulkApplyPanel(spec: { path: string; title: string; label: string; plan: () => Promise<ApplyPlan>; more?: Child }): HTMLElement {
  const slot = h('div', { id: 'apply-result' });
  const confirmSlot = h('div');
  const note = h('textarea', { id: 'apply-note', name: 'note', required: true, maxlength: 1000 });
  const button = h('button', { type: 'submit' }, spec.label);
  const form = h(
    'form',
    { class: 'fields', id: 'apply-form' },
    h('label', { for: note.id }, 'Note (required: what the resolutions rest on, kept in each)', note),
    button,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void ask();
  });
  const ask = async () => {
    const text = note.value.trim();
    if (!text) return note.reportValidity();
    button.disabled = true;
    const plan = await spec.plan().finally(() => (button.disabled = false));
    if (typeof plan === 'string') return confirmSlot.replaceChildren(h('p', { class: 'error', role: 'alert' }, plan));
    const body = {
      note: text,
      ...(plan.named ? { orders: plan.orders.map((o) => (o.chosen ? { order_no: o.order_no, outcome: o.outcome } : { order_no: o.order_no })) } : {}),
    };
    confirmIn(confirmSlot, {
      question: `Resolve ${count(plan.orders.length, 'order')}?`,
      effect: h('span', {}, 'Each becomes a resolution as by hand, decided against the order as it stands then; one resolved meanwhile is skipped.'),
      more: [
        h(
          'ul',
          { class: 'plan' },
          planLines(plan.orders).map((line) => h('li', {}, line)),
        ),
        h('p', {}, `Note: ${text}`),
        fourEyesHint(),
      ],
      label: `Confirm: resolve ${count(plan.orders.length, 'order')}`,
      id: 'confirm-apply',
      back: () => button,
      onConfirm: async (result) => {
        const reply = gated(await api<BulkApplyView | ApprovalView>('POST', spec.path, body));
        if (!reply.ok) return result.replaceChildren(errorBox(reply));
        confirmSlot.replaceChildren();
        form.reset();
        if (reply.waiting) return showWaiting(slot, reply.waiting);
        announce(`Applied: ${countsText(reply.data.counts)}.`);
        await redrawShowing(appliedView(reply.data));
      },
    });
  };
  return h(
    'section',
    { class: 'card', id: 'apply', 'aria-labelledby': 'apply-title' },
    h('h2', { id: 'apply-title' }, spec.title),
    spec.more,
    form,
    confirmSlot,
    slot,
  );
}

/** The page drawn again, so every order shows what the apply did with it, and what it did said where the panel is. */
async function redrawShowing(shown: HTMLElement) {
  await refresh();
  document.getElementById('apply-result')?.replaceChildren(shown);
  shown.focus();
}

export const countsText = (c: BulkApplyView['counts']) =>
  `${c.applied} applied, ${c.already_applied} already applied, ${c.skipped} skipped, ${c.refused} refused`;

/** What an apply did: the counts, the money per currency, and each order it did not resolve, with why. */
export function appliedView(v: BulkApplyView): HTMLElement {
  const notApplied = v.orders.filter((o) => o.result === 'skipped' || o.result === 'refused');
  return h(
    'div',
    { class: 'passed applied', id: 'applied', tabindex: -1 },
    h('strong', {}, `Applied: ${countsText(v.counts)}.`),
    facts([
      ['Applied by', named(v.applied_by_name, v.applied_by)],
      v.approved_by !== null && ['Approved by', named(v.approved_by_name, v.approved_by)],
      [
        'Money',
        v.amounts.length === 0 ? 'none moved' : v.amounts.map((a) => `${a.deducted} ${a.currency} deducted, ${a.released} ${a.currency} released`).join('; '),
      ],
    ]),
    notApplied.length > 0 &&
      table(
        [
          ['Order', (o) => link(`#/order/${segment(o.order_no)}`, o.order_no)],
          ['Result', (o) => o.result],
          ['Why', (o) => `${o.code ?? ''}${o.message ? `: ${o.message}` : ''}`],
          ['Resolved by', (o) => (o.resolved_by === null ? '—' : named(o.resolved_by_name, o.resolved_by))],
        ],
        notApplied,
      ),
  );
}

/** Every item of a paged list, a thousand at a time (the most a page holds). */
export async function everyPage<T>(page: (limit: number, offset: number) => Promise<{ items: T[]; total: number } | undefined>): Promise<T[] | undefined> {
  const all: T[] = [];
  for (;;) {
    const got = await page(1000, all.length);
    if (!got) return undefined;
    all.push(...got.items);
    if (got.items.length === 0 || all.length >= got.total) return all;
  }
}
