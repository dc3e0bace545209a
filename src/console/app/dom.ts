/**
 * The one way the console makes elements. Strings become text nodes, never
 * markup, so text from the service (merchant names, notes, callback replies)
 * is always shown as text; the lint forbids the DOM's HTML parsers in
 * src/console altogether.
 */

/** A child: an element, text, or a list of them; null, undefined and false are left out. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/** An attribute: true sets it empty, null, undefined and false leave it out. */
export type AttrValue = string | number | boolean | null | undefined;

/** Attributes by name; a name starting with `on` is an event listener (`onclick`). */
export type Attrs = Record<string, AttrValue | ((event: Event) => unknown)>;

function* nodes(children: readonly Child[]): Generator<Node | string> {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) yield* nodes(child);
    else if (child instanceof Node) yield child;
    else yield document.createTextNode(String(child));
  }
}

function build<E extends Element>(el: E, attrs: Attrs | null | undefined, children: readonly Child[], html: boolean): E {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    // An input's value is its property: the attribute is only its default.
    else if (key === 'value' && html && 'value' in el) (el as unknown as { value: string }).value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...nodes(children));
  return el;
}

/** h('a', { href: '#/x', onclick: fn }, 'text', child, [more]) */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  return build(document.createElement(tag), attrs, children, true);
}

/** The same for SVG's elements (charts). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): SVGElementTagNameMap[K] {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children, false);
}

/** Appends children to an element as h() would: what is left out (null, undefined, false) adds nothing. */
export function append(parent: Element, ...children: Child[]): void {
  parent.append(...nodes(children));
}
