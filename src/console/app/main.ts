// The staff console. It speaks only to the back-office API (/admin/v1) with
// the session cookie, sending the session's CSRF token with every change.
// Pages are built with DOM calls (dom.ts), never by parsing HTML, so data
// from the service is always text, and the Content-Security-Policy needs no
// exceptions.
import { api } from './api';
import { h } from './dom';
import { currentPath, go, onNavigate } from './navigation';
import { approvalPage } from './pages/approval';
import { approvalsPage } from './pages/approvals';
import { cataloguePage } from './pages/catalogue';
import { dashboardPage } from './pages/dashboard';
import { merchantPage } from './pages/merchant';
import { merchantsPage } from './pages/merchants';
import { orderPage } from './pages/order';
import { ordersPage } from './pages/orders';
import { queuePage } from './pages/queue';
import { rebuildPage } from './pages/rebuild';
import { reportPage } from './pages/report';
import { reportsPage } from './pages/reports';
import { requeryPage } from './pages/requery';
import { signInPage } from './pages/sign-in';
import { staffPage } from './pages/staff';
import { statementPage } from './pages/statement';
import { statusPage } from './pages/status';
import { verifyPage } from './pages/verify';
import type { ConsoleSessionView } from './replies';
import { currentSession, setSession } from './session';
import { landingPage, pageTitle, refreshPendingCount, shell } from './shell';

/** A page draws itself into `main`; `arg` is what follows its name in the address (`#/order/T01J...`). */
export type Page = (main: HTMLElement, arg: string) => Promise<unknown> | unknown;

const ROUTES: Record<string, Page> = {
  dashboard: dashboardPage,
  queue: queuePage,
  requery: requeryPage,
  reports: reportsPage,
  report: reportPage,
  approvals: approvalsPage,
  approval: approvalPage,
  orders: ordersPage,
  order: orderPage,
  statement: statementPage,
  verify: verifyPage,
  merchants: merchantsPage,
  merchant: merchantPage,
  catalogue: cataloguePage,
  staff: staffPage,
  rebuild: rebuildPage,
  status: statusPage,
};

/** A page reached from another is shown under that one in the navigation. */
const NAV_PARENT: Record<string, string> = {
  order: 'orders',
  merchant: 'merchants',
  approval: 'approvals',
  requery: 'queue',
  reports: 'queue',
  report: 'queue',
};

const app = document.getElementById('app')!;
/** Whether a page has been drawn since the document loaded: the sign-in page counts. */
let drawn = false;

async function route() {
  if (!currentSession()) {
    const reply = await api<ConsoleSessionView | null>('GET', '/console/session');
    setSession(reply.ok ? reply.data : null);
  }
  const { path, arg } = currentPath();
  if (!currentSession()) {
    document.title = 'Sign in · Top-up console';
    drawn = true;
    return app.replaceChildren(signInPage());
  }
  if (path === 'sign-in' || path === '') return go(`#/${landingPage()}`);
  const page = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
  // Focusable by script only: a page drawn after another takes the focus, which the link or button that led here has
  // lost with the old page. The first page of a visit leaves it at the top, where Tab meets the skip link.
  const main = h('main', { id: 'main', tabindex: -1 });
  const current = NAV_PARENT[path] ?? path;
  document.title = pageTitle(current);
  app.replaceChildren(shell(current), main);
  void refreshPendingCount();
  if (drawn) main.focus({ preventScroll: true });
  drawn = true;
  if (!page) return main.append(h('h1', {}, 'No such page'), h('p', { class: 'error', role: 'alert' }, 'No such page.'));
  try {
    await page(main, arg ?? '');
  } catch (error) {
    main.append(h('p', { class: 'error', role: 'alert' }, `The page failed: ${error instanceof Error ? error.message : String(error)}`));
  }
}

onNavigate(route);
window.addEventListener('hashchange', route);
void route();
