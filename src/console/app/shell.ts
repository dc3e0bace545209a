import { api } from './api';
import { h } from './dom';
import { go } from './navigation';
import type { StaffRole } from './replies';
import { currentSession, may, setSession } from './session';

/** The pages in the navigation, with the roles besides admin that see each. */
export const PAGES: readonly (readonly [path: string, title: string, roles: readonly StaffRole[]])[] = [
  ['dashboard', 'Dashboard', []],
  ['queue', 'Reconciliation queue', ['reconciler']],
  ['orders', 'Orders', ['reconciler', 'auditor']],
  ['statement', 'Statements', ['auditor']],
  ['verify', 'Verification', ['auditor']],
  ['merchants', 'Merchants', []],
  ['catalogue', 'Catalogue', []],
  ['staff', 'Staff', []],
  ['rebuild', 'Rebuild', []],
  ['status', 'Status', []],
];

/** The first page the signed-in role may see: where signing in lands. */
export const landingPage = () => PAGES.find(([, , roles]) => may(...roles))?.[0];

async function signOut() {
  await api('DELETE', '/console/session');
  setSession(null);
  go('#/sign-in');
}

/** The tab's title: the page's name in the navigation, then the console's. */
export const pageTitle = (current: string) => [PAGES.find(([path]) => path === current)?.[1], 'Top-up console'].filter(Boolean).join(' · ');

/**
 * Skips the header to the page's content. The address is the page's own
 * fragment router's, so the link moves the focus itself rather than
 * following `#main`, which would name a page.
 */
function skipToMain(event: Event) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

/** The header: a skip link, the pages this role may see (the current one marked), who is signed in, and sign-out. */
export function shell(current: string): HTMLElement {
  const session = currentSession();
  const nav = PAGES.filter(([, , roles]) => may(...roles)).map(([path, title]) =>
    h('a', { href: `#/${path}`, class: path === current ? 'current' : undefined, 'aria-current': path === current && 'page' }, title),
  );
  return h(
    'header',
    {},
    h('a', { class: 'skip', href: '#main', onclick: skipToMain }, 'Skip to the page’s content'),
    h('span', { class: 'brand' }, 'Top-up console'),
    h('nav', { 'aria-label': 'Pages' }, nav),
    h('span', { class: 'who' }, session && [h('span', { class: 'visually-hidden' }, 'Signed in: '), `${session.name} · ${session.role}`]),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'),
  );
}
