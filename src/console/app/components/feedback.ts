import type { Failure, Reply } from '../api';
import { Child, h } from '../dom';

/** A refusal or failure as the service worded it, with the field it names. */
export const errorBox = (reply: Failure) =>
  h('div', { class: 'error', role: 'alert' }, `${reply.body.code}: ${reply.body.message}`, reply.body.field ? ` (field ${reply.body.field})` : '');

/** Shows the result of an action below its form: an error, or what `render` makes of the data. */
export function outcome<T>(slot: Element, reply: Reply<T>, render: (data: T) => Node) {
  slot.replaceChildren(reply.ok ? render(reply.data) : errorBox(reply));
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
