import type { Failure, Reply } from '../api';
import { Child, h } from '../dom';

/** A refusal or failure as the service worded it, with the field it names. */
export const errorBox = (reply: Failure) =>
  h('div', { class: 'error', role: 'alert' }, `${reply.body.code}: ${reply.body.message}`, reply.body.field ? ` (field ${reply.body.field})` : '');

/**
 * Says a message to whoever listens with a screen reader, through the page's
 * one polite live region (index.html), which outlives every page drawn under
 * it. Emptied first, so the same message twice is said twice.
 */
export function announce(message: string) {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  setTimeout(() => (region.textContent = message), 50);
}

/** Read out as it appears: an error (an alert) or a secret shown once (a status). */
const speaksForItself = (node: Node) => node instanceof Element && node.matches('[role=alert], [role=status]');

/** What a result says, as a line: its text as laid out, spaced, and cut short where it is a long table. */
const spoken = (node: Node) => (node instanceof HTMLElement ? node.innerText : (node.textContent ?? '')).replace(/\s+/g, ' ').trim().slice(0, 300);

/** Shows the result of an action below its form: an error, or what `render` makes of the data; either is read out. */
export function outcome<T>(slot: Element, reply: Reply<T>, render: (data: T) => Node) {
  const shown = reply.ok ? render(reply.data) : errorBox(reply);
  slot.replaceChildren(shown);
  if (!speaksForItself(shown)) announce(spoken(shown));
}

/** A secret the service shows once: say so, and never put it anywhere but this page. */
export const shownOnce = (what: string, value: string, more: Child = []) =>
  h(
    'div',
    { class: 'secret', role: 'status' },
    h('strong', {}, `${what}: shown only now. Copy it and hand it over safely; it cannot be shown again.`),
    h('p', {}, h('code', { class: 'once' }, value)),
    more,
  );
