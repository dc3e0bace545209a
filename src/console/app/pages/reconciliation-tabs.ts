import { h } from '../dom';
import type { StaffRole } from '../replies';
import { may } from '../session';

/** The parts of reconciliation, with the roles besides admin that see each: auditors read jobs and reports, and work no queue. */
const TABS: readonly (readonly [path: string, title: string, roles: readonly StaffRole[]])[] = [
  ['queue', 'Queue', ['reconciler']],
  ['requery', 'Re-query jobs', ['reconciler', 'auditor']],
  ['reports', 'Upstream reports', ['reconciler', 'auditor']],
];

/** Where Reconciliation in the navigation leads this role: the queue, or for an auditor the reports. */
export const reconciliationHome = () => TABS.find(([, , roles]) => may(...roles))?.[0] ?? 'queue';

/** The sub-navigation of the Reconciliation pages, the current part marked, under the page's heading. */
export const reconciliationTabs = (current: string) =>
  h(
    'nav',
    { class: 'tabs', 'aria-label': 'Reconciliation' },
    TABS.filter(([, , roles]) => may(...roles)).map(([path, title]) =>
      h('a', { href: `#/${path}`, class: path === current ? 'current' : undefined, 'aria-current': path === current && 'page' }, title),
    ),
  );
