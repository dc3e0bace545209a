import { h } from '../dom';

/** Someone or something the service keeps by id (staff, merchants), shown by name, with the id in the title; the id alone when no name is known. */
export const named = (name: string | null | undefined, id: string) => h('span', { title: id }, name ?? id);

/** The same with the id shown beside the name, where both are wanted (who resolved an order). */
export const namedWithId = (name: string | null | undefined, id: string) =>
  name ? h('span', {}, name, h('span', { class: 'muted' }, ` (${id})`)) : h('span', {}, id);
