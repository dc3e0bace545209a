/** The benchmark's targets: what each figure must meet, and the verdict printed beside it. */
import { Spread } from './tables';

/** A target: the service's figure per pass (CRUD's beside it), and what meets it. */
export interface Check {
  what: string;
  target: string;
  ok: (v: number) => boolean;
  service: Spread;
  crud?: Spread;
  digits: number;
  /** Why the figure is not held against the target in this run (the verdict says so instead). */
  notJudged?: string;
}

export const atMost = (limit: number) => (v: number) => v <= limit;
export const atLeast = (limit: number) => (v: number) => v >= limit;

/** "yes", "NO", or over several passes how many met it. */
export function verdict(check: Check): string {
  if (check.notJudged) return check.notJudged;
  const values = check.service.values.filter((v) => !Number.isNaN(v));
  const met = values.filter(check.ok).length;
  if (values.length === 0) return 'n/a';
  if (values.length === 1) return met ? 'yes' : 'NO';
  if (met === values.length) return 'yes, every pass';
  return met === 0 ? 'NO, no pass' : `${met} of ${values.length} passes`;
}
