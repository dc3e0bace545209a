import { ApiError } from '../../infrastructure/http/api-error';

/**
 * The dashboard's windows: the last hour a point a minute, the last day a
 * point every 15 minutes (96 points: a chart's width, and 15 rows of
 * minutes summed per point).
 */
export const DASHBOARD_WINDOWS = {
  '1h': { stepSeconds: 60, points: 60 },
  '24h': { stepSeconds: 900, points: 96 },
} as const;

export type DashboardWindow = keyof typeof DASHBOARD_WINDOWS;

const WINDOW_NAMES = Object.keys(DASHBOARD_WINDOWS) as DashboardWindow[];
const invalid = (field: string, message: string) => new ApiError(422, 'VALIDATION_FAILED', message, field);

/**
 * The window the query string asks for (1h without one). Like every query
 * parameter of the back office, anything else is refused naming the
 * parameter: another value, an empty one, the parameter twice, or a
 * parameter the route does not take.
 */
export function dashboardWindow(query: Record<string, unknown>): DashboardWindow {
  for (const name of Object.keys(query)) {
    if (name !== 'window') throw invalid(name, `Unknown query parameter ${name}; this route takes window`);
  }
  const raw = query.window;
  if (raw === undefined) return '1h';
  if (typeof raw !== 'string') throw invalid('window', 'window may be given once');
  if (!WINDOW_NAMES.includes(raw as DashboardWindow)) throw invalid('window', `window must be ${WINDOW_NAMES.join(' or ')} (default 1h)`);
  return raw as DashboardWindow;
}

/** The window's points: each slot's start, oldest first, the last one the slot now is in (so far); `to` ends it. */
export interface WindowSlots {
  stepSeconds: number;
  starts: Date[];
  from: Date;
  to: Date;
}

/** Slots aligned on the Unix epoch (whole minutes, quarter hours in UTC), as the queries' date_bin puts rows in them. */
export function windowSlots(window: DashboardWindow, now: Date): WindowSlots {
  const { stepSeconds, points } = DASHBOARD_WINDOWS[window];
  const step = stepSeconds * 1000;
  const last = Math.floor(now.getTime() / step) * step;
  const starts = Array.from({ length: points }, (_, i) => new Date(last - (points - 1 - i) * step));
  return { stepSeconds, starts, from: starts[0], to: new Date(last + step) };
}
