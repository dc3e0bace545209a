import { Child, h } from '../dom';

/** A column: its title (text, or a control such as a select-all box), what each row shows in it, and a class for both (`num` right-aligns). */
export type Column<T> = readonly [title: Child, cell: (row: T) => Child, cls?: string];

/** Rows under their columns' titles, or a line saying there is nothing. */
export function table<T>(columns: readonly Column<T>[], rows: readonly T[], empty = 'Nothing to show.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...columns.map(([title, , cls]) => h('th', { class: cls, scope: 'col' }, title)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {}, ...columns.map(([, cell, cls]) => h('td', { class: cls }, cell(row)))))),
  );
}
