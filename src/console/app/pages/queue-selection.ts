import { api } from '../api';
import { row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { count } from '../components/format';
import { h } from '../dom';
import { go } from '../navigation';
import type { RequeryJobView } from '../replies';

/** What a bulk re-query job takes: the orders chosen, or those the filter selects. */
export type QueueFilter = { merchant_id?: string; created_from?: string; created_to?: string };

/**
 * Choosing orders of the queue for a bulk re-query: a box per row, one for
 * the page, then, as mail clients do, "all that match" beyond the page. The
 * button starts the job with the order numbers chosen, or with the filter
 * (for the whole queue: the orders created until now), and opens its page,
 * where its progress shows. A re-query moves no money: no confirmation.
 */
export class QueueSelection {
  private readonly picked = new Set<string>();
  private all = false;
  private readonly boxes = new Map<string, HTMLInputElement>();
  readonly pageBox = h('input', { type: 'checkbox', id: 'select-page', 'aria-label': 'Select every order on this page' });
  private readonly said = h('span', { id: 'selection-said' });
  private readonly button = h('button', { type: 'button', id: 'requery-selected', disabled: true }, 'Re-query the selected orders');
  private readonly slot = h('div');

  /**
   * @param onPage the order numbers on this page
   * @param matching how many orders match in all (null: not known, for a filtered view)
   */
  constructor(
    private readonly onPage: readonly string[],
    private readonly matching: number | null,
    private readonly filter: QueueFilter,
  ) {
    this.pageBox.addEventListener('change', () => this.choosePage(this.pageBox.checked));
    this.button.addEventListener('click', () => void this.start());
  }

  /** The row's box. */
  box(orderNo: string): HTMLInputElement {
    const box = h('input', { type: 'checkbox', name: 'order_no', value: orderNo, 'aria-label': `Select ${orderNo}` });
    box.addEventListener('change', () => {
      this.all = false;
      if (box.checked) this.picked.add(orderNo);
      else this.picked.delete(orderNo);
      this.show();
    });
    this.boxes.set(orderNo, box);
    return box;
  }

  /** The bar above the table: what is chosen, the step to all that match, and the button. */
  bar(): HTMLElement {
    this.show();
    return h('div', { class: 'selection-bar', id: 'selection-bar' }, row(this.said, this.button), this.slot);
  }

  private choosePage(on: boolean) {
    this.all = false;
    for (const orderNo of this.onPage) {
      if (on) this.picked.add(orderNo);
      else this.picked.delete(orderNo);
      const box = this.boxes.get(orderNo);
      if (box) box.checked = on;
    }
    this.show();
  }

  private chooseAll(on: boolean) {
    this.choosePage(on);
    this.all = on;
    this.pageBox.checked = on;
    this.show();
  }

  private show() {
    const n = this.picked.size;
    const everyOnPage = this.onPage.length > 0 && this.onPage.every((o) => this.picked.has(o));
    this.pageBox.checked = everyOnPage;
    this.pageBox.indeterminate = n > 0 && !everyOnPage;
    const allText =
      this.matching === null ? 'all that match the filter' : `all ${count(this.matching, 'order')} ${this.filtered ? 'that match' : 'in the queue'}`;
    const beyond = this.matching === null || this.matching > this.onPage.length;
    const link = (text: string, on: boolean) =>
      h('button', { type: 'button', class: 'link', id: on ? 'select-all' : 'clear-selection', onclick: () => this.chooseAll(on) }, text);
    this.said.replaceChildren(
      ...(this.all
        ? [`${capital(allText)} are selected. `, link('Clear the selection', false)]
        : everyOnPage && beyond
          ? [`The ${count(n, 'order')} on this page ${n === 1 ? 'is' : 'are'} selected. `, link(`Select ${allText}`, true)]
          : [n === 0 ? 'No order selected.' : `${count(n, 'order')} selected.`]),
    );
    this.button.disabled = !this.all && n === 0;
    this.button.replaceChildren(this.all ? `Re-query ${allText}` : n === 0 ? 'Re-query the selected orders' : `Re-query the ${count(n, 'selected order')}`);
  }

  private get filtered() {
    return Object.values(this.filter).some(Boolean);
  }

  /** Starts the job and opens its page. */
  private async start() {
    this.button.disabled = true;
    // A job never takes the whole queue unasked: asked for all of it, the orders created until now.
    const body = this.all ? (this.filtered ? this.filter : { created_to: new Date().toISOString() }) : { order_nos: [...this.picked] };
    const reply = await api<RequeryJobView>('POST', '/admin/v1/reconciliation/requery', body);
    if (!reply.ok) {
      this.button.disabled = false;
      return this.slot.replaceChildren(errorBox(reply));
    }
    go(`#/requery/${reply.data.job_id}`);
  }
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
