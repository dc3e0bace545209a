import { api } from '../api';
import { errorBox } from '../components/feedback';
import { time } from '../components/format';
import { h } from '../dom';
import { hashWith, params, refresh } from '../navigation';
import type { DashboardView } from '../replies';
import { answersChart, callbacksChart, lagChart, latencyChart, lowBalancePanel, ordersChart, queuesPanel, windowName } from './dashboard-panels';

const WINDOWS = [
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
] as const;

type Window = (typeof WINDOWS)[number][0];

/**
 * The operations dashboard, where operators land: how the last hour or day
 * went (orders by outcome, the upstream, callbacks), and what waits now (the
 * projections' lag, the queues, merchants low on money). One request; the
 * window is in the address, so switching it draws the page again.
 */
export async function dashboardPage(main: HTMLElement) {
  const asked = params().get('window');
  const window: Window = WINDOWS.find(([w]) => w === asked)?.[0] ?? '1h';
  const reply = await api<DashboardView>('GET', `/admin/v1/operations/dashboard?window=${window}`);
  main.append(
    h('h1', {}, 'Operations dashboard'),
    h(
      'div',
      { class: 'row dash-controls' },
      h(
        'div',
        { role: 'group', 'aria-label': 'Window', class: 'dash-window' },
        WINDOWS.map(([w, label]) =>
          h('a', { href: hashWith('dashboard', { window: w }), class: w === window ? 'current' : undefined, 'aria-current': w === window && 'true' }, label),
        ),
      ),
      h('button', { type: 'button', class: 'secondary', onclick: refresh }, 'Refresh'),
    ),
  );
  if (!reply.ok) return main.append(errorBox(reply));
  const d = reply.data;
  main.append(
    h(
      'p',
      { class: 'muted', id: 'dashboard-window' },
      `${windowName(d)[0].toUpperCase()}${windowName(d).slice(1)}, ${time(d.from)} to ${time(d.to)}; as of ${time(d.at)}. Times are UTC.`,
    ),
    h(
      'div',
      { class: 'dash-grid' },
      ordersChart(d),
      answersChart(d),
      latencyChart(d),
      callbacksChart(d),
      lagChart(d.now),
      queuesPanel(d.now),
      lowBalancePanel(d.now),
    ),
  );
}
