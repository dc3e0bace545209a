// The staff console. It speaks only to the back-office API (/admin/v1) with
// the session cookie, sending the session's CSRF token with every change.
// Pages are built with DOM calls (dom.ts), never by parsing HTML, so data
// from the service is always text, and the Content-Security-Policy needs no
// exceptions.
import { api } from './api';
import { h } from './dom';
import { currentPath, go, onNavigate } from './navigation';
import { cataloguePage } from './pages/catalogue';
import { merchantPage } from './pages/merchant';
import { merchantsPage } from './pages/merchants';
import { orderPage } from './pages/order';
import { ordersPage } from './pages/orders';
import { queuePage } from './pages/queue';
import { rebuildPage } from './pages/rebuild';
import { signInPage } from './pages/sign-in';
import { staffPage } from './pages/staff';
import { statementPage } from './pages/statement';
import { statusPage } from './pages/status';
import { verifyPage } from './pages/verify';
import type { ConsoleSessionView } from './replies';
import { currentSession, setSession } from './session';
import { landingPage, shell } from './shell';

/** A page draws itself into `main`; `arg` is what follows its name in the address (`#/order/T01J...`). */
export type Page = (main: HTMLElement, arg: string) => Promise<unknown> | unknown;

const ROUTES: Record<string, Page> = {
  queue: queuePage,
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
const NAV_PARENT: Record<string, string> = { order: 'orders', merchant: 'merchants' };

const app = document.getElementById('app')!;

async function route() {
  if (!currentSession()) {
    const reply = await api<ConsoleSessionView | null>('GET', '/console/session');
    setSession(reply.ok ? reply.data : null);
  }
  const { path, arg } = currentPath();
  if (!currentSession()) return app.replaceChildren(signInPage());
  if (path === 'sign-in' || path === '') return go(`#/${landingPage()}`);
  const page = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
  const main = h('main');
  app.replaceChildren(shell(NAV_PARENT[path] ?? path), main);
  if (!page) return main.append(h('p', { class: 'error' }, 'No such page.'));
  try {
    await page(main, arg ?? '');
  } catch (error) {
    main.append(h('p', { class: 'error' }, `The page failed: ${error instanceof Error ? error.message : String(error)}`));
  }
}

onNavigate(route);
window.addEventListener('hashchange', route);
void route();
