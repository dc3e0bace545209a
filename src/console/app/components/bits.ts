import { Child, h } from '../dom';

/** A stage or status as a coloured label; its text is its class. */
export const pill = (text: string) => h('span', { class: `pill ${text}` }, text);

export const link = (href: string, text: Child) => h('a', { href }, text);

/** A value as indented JSON, for what has no better view. */
export const json = (value: unknown) => h('pre', {}, JSON.stringify(value, null, 1));

/** A row of links or buttons; what is left out (false, null) takes no room. */
export const row = (...children: Child[]) => h('div', { class: 'row' }, ...children);

/** A labelled list of facts; a missing value shows as a dash. Falsy entries are left out. */
export type Fact = readonly [label: string, value: Child];

export const facts = (pairs: readonly (Fact | false | null | undefined | '')[]) =>
  h(
    'dl',
    { class: 'facts' },
    pairs.filter((pair): pair is Fact => Boolean(pair)).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
