import { Child, h } from '../dom';
import { row } from './bits';

/** A step that moves money (or settles a request for good), asked once more in words before it is taken. */
export interface ConfirmSpec {
  /** The question, in bold: "Resolve T01J... as success?". */
  question: string;
  /** What it does, said after the question: whose money moves, how much, which way. */
  effect: Child;
  /** More lines under it: the note that goes with it. */
  more?: Child;
  /** The button that does it. */
  label: string;
  id?: string;
  /** The button is red: the step moves money or cannot be undone. */
  danger?: boolean;
  /** Does it; an error is for `result`, under the buttons. While it runs the buttons are disabled, so it is done once. */
  onConfirm: (result: HTMLElement) => Promise<unknown>;
  /** Where the focus goes back to on Cancel: the button that asked. */
  back: () => HTMLElement | null | undefined;
}

/** The ids of a confirmation's question and effect: several confirmations may be open on one page. */
let made = 0;

/**
 * Shows the confirmation in `slot` and gives it the focus: an alertdialog
 * named by its question and described by its effect, so a screen reader
 * reads both; Tab goes on to its buttons. Cancel takes it away and gives
 * the focus back.
 */
export function confirmIn(slot: HTMLElement, spec: ConfirmSpec): HTMLElement {
  const n = ++made;
  const result = h('div');
  const buttons: HTMLButtonElement[] = [];
  const go = async () => {
    buttons.forEach((b) => (b.disabled = true));
    try {
      await spec.onConfirm(result);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  };
  const cancel = () => {
    slot.replaceChildren();
    spec.back()?.focus();
  };
  buttons.push(
    h('button', { type: 'button', class: spec.danger === false ? undefined : 'danger', id: spec.id, onclick: go }, spec.label),
    h('button', { type: 'button', class: 'secondary', onclick: cancel }, 'Cancel'),
  );
  const dialog = h(
    'div',
    { class: 'confirm', role: 'alertdialog', 'aria-labelledby': `confirm-question-${n}`, 'aria-describedby': `confirm-effect-${n}`, tabindex: -1 },
    h('p', { id: `confirm-effect-${n}` }, h('strong', { id: `confirm-question-${n}` }, spec.question), ' ', spec.effect),
    spec.more,
    row(...buttons),
    result,
  );
  slot.replaceChildren(dialog);
  dialog.focus();
  return dialog;
}
