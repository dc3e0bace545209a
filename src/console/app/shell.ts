import { api } from './api';
import { h } from './dom';
import { go } from './navigation';
import { reconciliationHome } from './pages/reconciliation-tabs';
import type { ApprovalPageView, StaffRole } from './replies';
import { currentSession, may, setSession } from './session';

/** The pages in the navigation, with the roles besides admin that see each. */
export const PAGES: readonly (readonly [path: string, title: string, roles: readonly StaffRole[]])[] = [
  ['dashboard', 'Dashboard', []],
  ['queue', 'Reconciliation', ['reconciler', 'auditor']],
  ['orders', 'Orders', ['reconciler', 'auditor']],
  ['approvals', 'Approvals', ['reconciler', 'auditor']],
  ['statement', 'Statements', ['auditor']],
  ['verify', 'Verification', ['auditor']],
  ['merchants', 'Merchants', []],
  ['catalogue', 'Catalogue', []],
  ['staff', 'Staff', []],
  ['rebuild', 'Rebuild', []],
  ['status', 'Status', []],
];

/** Where signing in lands: an operator on the dashboard, a clerk on the queue, an auditor on the orders. */
const LANDING: Record<StaffRole, string> = { admin: 'dashboard', reconciler: 'queue', auditor: 'orders' };

export const landingPage = () => {
  const session = currentSession();
  return session ? LANDING[session.role] : undefined;
};

/** A page's link in the navigation: Reconciliation leads each role to the part of it that role works in. */
const hrefOf = (path: string) => `#/${path === 'queue' ? reconciliationHome() : path}`;

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

/** How many requests wait for a second person, beside Approvals in the navigation; empty when none do. */
const pendingCount = () => h('span', { class: 'count', id: 'pending-count' });

/**
 * Asks how many requests wait, and says it beside Approvals: on every page
 * drawn, and after a decision. The list answers with its total; one row is
 * all it needs to read.
 */
export async function refreshPendingCount() {
  const reply = await api<ApprovalPageView>('GET', '/admin/v1/approvals?status=pending&limit=1');
  const slot = document.getElementById('pending-count');
  if (!slot || !reply.ok) return;
  const waiting = reply.data.total;
  slot.replaceChildren(
    ...(waiting > 0 ? [h('span', { 'aria-hidden': 'true' }, String(waiting)), h('span', { class: 'visually-hidden' }, ` (${waiting} waiting)`)] : []),
  );
  slot.classList.toggle('some', waiting > 0);
}

/** The header: a skip link, the pages this role may see (the current one marked), who is signed in, and sign-out. */
export function shell(current: string): HTMLElement {
  const session = currentSession();
  const nav = PAGES.filter(([, , roles]) => may(...roles)).map(([path, title]) =>
    h(
      'a',
      { href: hrefOf(path), class: path === current ? 'current' : undefined, 'aria-current': path === current && 'page' },
      title,
      path === 'approvals' && pendingCount(),
    ),
  );
  return h(
    'header',
    {},
    h('a', { class: 'skip', href: '#main', onclick: skipToMain }, 'Skip to the page’s content'),
    h('span', { class: 'brand' }, 'Top-up console'),
    h('nav', { 'aria-label': 'Pages' }, nav),
    h(
      'span',
      { class: 'who', title: session ? `${session.name} · ${session.role}` : undefined },
      session && [h('span', { class: 'visually-hidden' }, 'Signed in: '), `${session.name} · ${session.role}`],
    ),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'),
  );
}
