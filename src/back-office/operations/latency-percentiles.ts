import { UPSTREAM_LATENCY_BOUNDS_MS } from '../../../projections/order-minutes.projection';

/**
 * A quantile of the upstream's latency, in milliseconds, from a histogram of
 * answers per bucket (`counts[b]`: the answers in bucket b of
 * UPSTREAM_LATENCY_BOUNDS_MS), as Prometheus's histogram_quantile estimates
 * it: the bucket that holds the quantile's rank, and within it a straight
 * line from its lower to its upper bound. The last bucket has no upper
 * bound, so a quantile in it is its lower bound (60 s: "at least").
 * Null when there were no answers. Rounded to a tenth of a millisecond.
 */
export function latencyQuantile(counts: readonly number[], q: number, bounds: readonly number[] = UPSTREAM_LATENCY_BOUNDS_MS): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (const [bucket, n] of counts.entries()) {
    if (n === 0 || below + n < rank) {
      below += n;
      continue;
    }
    const lower = bucket === 0 ? 0 : bounds[bucket - 1];
    const upper = bounds[bucket];
    if (upper === undefined) return lower;
    return Math.round((lower + ((upper - lower) * (rank - below)) / n) * 10) / 10;
  }
  return bounds[bounds.length - 1];
}

/** An empty histogram: one count per bucket, the one under the first bound included. */
export const emptyHistogram = (bounds: readonly number[] = UPSTREAM_LATENCY_BOUNDS_MS): number[] => new Array<number>(bounds.length + 1).fill(0);
