/**
 * What the service's own /metrics say about a load: read once as it starts
 * and once as it ends, the difference is the load's. The submit's time from
 * arrival to reply bounds an open loop over a fixed number of connections
 * (at most connections ÷ time a second, however fast requests are offered);
 * the append's time tells how much of it was the event store's.
 */
import { total } from '../support/prometheus-text';
export { scrapeMetrics } from '../support/prometheus-text';
import { SUBMIT_PATH } from './load-generator';

/** Samples by series: `name` or `name{label="value",...}` as the text format writes them. */
export type MetricSamples = Map<string, number>;

export interface ServerSideFigures {
  submits: number;
  /** Mean ms from a submit's arrival to its reply. */
  submitMs: number;
  /** Mean ms from an append being asked of the event store to its commit (grouped appends each counted). */
  appendMs: number;
  /** The share of the submits that took longer than each of these ms inside the service (its histogram's bucket bounds). */
  submitsOver: Array<{ ms: number; share: number }>;
}

/** Bucket bounds of http_request_duration_seconds that tell a submit's tail from its median. */
const TAIL_BOUNDS_S = ['0.025', '0.05', '0.1'];

/** The growth from `before` to `after` of every series of `name` whose labels include each of `having`, summed. */
const grown = (before: MetricSamples, after: MetricSamples, name: string, ...having: string[]): number =>
  total(after, name, ...having) - total(before, name, ...having);

/** The load's figures from a scrape as it started and one as it ended; undefined when no submit was answered between them. */
export function serverSide(before: MetricSamples, after: MetricSamples): ServerSideFigures | undefined {
  const submitRoute = `route="${SUBMIT_PATH}"`;
  const submits = grown(before, after, 'http_request_duration_seconds_count', submitRoute);
  if (submits <= 0) return undefined;
  const appends = grown(before, after, 'event_store_append_duration_seconds_count');
  const ms = (seconds: number) => seconds * 1000;
  return {
    submits,
    submitMs: ms(grown(before, after, 'http_request_duration_seconds_sum', submitRoute) / submits),
    appendMs: appends > 0 ? ms(grown(before, after, 'event_store_append_duration_seconds_sum') / appends) : NaN,
    submitsOver: TAIL_BOUNDS_S.map((le) => ({
      ms: ms(Number(le)),
      share: 1 - grown(before, after, 'http_request_duration_seconds_bucket', `le="${le}"`, submitRoute) / submits,
    })),
  };
}

/**
 * The mean number of upstream slots held over a window (slot-seconds ÷
 * seconds), of the service's FULFILMENT_CONCURRENCY: near all of them,
 * the slots rather than the CPU bounded what it completed. The counter
 * counts the slots still held up to the scrape, so the window holds exactly
 * the slot time spent in it.
 */
export function slotsHeld(start: MetricSamples, end: MetricSamples, windowMs: number): { busy: number; of: number } {
  return { busy: grown(start, end, 'topup_fulfilment_slot_seconds_total') / (windowMs / 1000), of: total(end, 'topup_fulfilment_slots') };
}
