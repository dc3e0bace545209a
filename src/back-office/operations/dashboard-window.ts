import { choice } from '../http/query-readers';

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

/** The dashboard's one query parameter: the window, 1h without one. */
export const DASHBOARD_QUERY = { window: choice(WINDOW_NAMES) };

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
