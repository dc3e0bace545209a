/**
 * Where the console is: pages are addressed by the URL's fragment
 * (`#/order/T01J...?x=y`), so a link to a page can be shared and never
 * carries a token. The router (main.ts) registers how a page is drawn;
 * pages call refresh() to draw theirs again after a change.
 */

let draw: () => Promise<void> = async () => {};

export function onNavigate(render: () => Promise<void>) {
  draw = render;
}

/** Draws the current page again, from fresh data. */
export const refresh = () => draw();

/** The page's name and its argument: `order` and `T01J...` for `#/order/T01J...`. */
export function currentPath(): { path: string; arg: string | undefined } {
  const [path, arg] = location.hash.replace(/^#\/?/, '').split('?')[0].split('/');
  return { path, arg: arg === undefined || arg === '' ? undefined : decodeURIComponent(arg) };
}

/** The fragment's query: the page's filters and cursor. */
export function params(): URLSearchParams {
  return new URLSearchParams(location.hash.split('?')[1] ?? '');
}

/** A fragment for a page with these parameters; empty and missing ones are left out. */
export function hashWith(path: string, values: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams(
    Object.entries(values).flatMap(([k, v]): [string, string][] => (v === undefined || v === null || v === '' ? [] : [[k, String(v)]])),
  );
  return `#/${path}${query.toString() ? `?${query}` : ''}`;
}

export function go(hash: string) {
  location.hash = hash;
}
