import { api } from './api';
import { h } from './dom';
import { go } from './navigation';
import type { StaffRole } from './replies';
import { currentSession, may, setSession } from './session';

/** The pages in the navigation, with the roles besides admin that see each. */
export const PAGES: readonly (readonly [path: string, title: string, roles: readonly StaffRole[]])[] = [
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

/** The header: the pages this role may see (the current one marked), who is signed in, and sign-out. */
export function shell(current: string): HTMLElement {
  const session = currentSession();
  const nav = PAGES.filter(([, , roles]) => may(...roles)).map(([path, title]) =>
    h('a', { href: `#/${path}`, class: path === current ? 'current' : undefined }, title),
  );
  return h(
    'header',
    {},
    h('span', { class: 'brand' }, 'Top-up console'),
    h('nav', {}, nav),
    h('span', { class: 'who' }, session && `${session.name} · ${session.role}`),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'),
  );
}
