import { UPSTREAM_LATENCY_BOUNDS_MS } from '../../../projections/order-minutes.projection';
import { emptyHistogram, latencyQuantile } from './latency-percentiles';

/** A histogram of the buckets given, by their lower bound in ms (0: under the first bound). */
function histogram(byLowerBound: Record<number, number>): number[] {
  const counts = emptyHistogram();
  for (const [lower, n] of Object.entries(byLowerBound)) {
    const bucket = Number(lower) === 0 ? 0 : UPSTREAM_LATENCY_BOUNDS_MS.indexOf(Number(lower)) + 1;
    if (bucket === 0 && Number(lower) !== 0) throw new Error(`no bucket starts at ${lower}`);
    counts[bucket] = n;
  }
  return counts;
}

describe('latencyQuantile', () => {
  it.each<[string, Record<number, number>, number, number | null]>([
    ['no answers', {}, 0.5, null],
    ['one answer: the middle of its bucket at p50', { 100: 1 }, 0.5, 125],
    ['one answer: near the top of its bucket at p99', { 100: 1 }, 0.99, 149.5],
    ['answers under 1 ms', { 0: 4 }, 0.5, 0.5],
    ['half fast, half slow: p50 at the top of the fast bucket', { 10: 50, 1000: 50 }, 0.5, 15],
    ['half fast, half slow: p99 in the slow bucket', { 10: 50, 1000: 50 }, 0.99, 1490],
    ['a tail of timeouts shows at p99 only', { 200: 98, 5000: 2 }, 0.99, 6000],
    ['the last bucket has no upper bound: its lower bound', { 60_000: 3 }, 0.99, 60_000],
  ])('%s', (_name, buckets, q, expected) => {
    expect(latencyQuantile(histogram(buckets), q)).toBe(expected);
  });

  it('has a bucket under the first bound and one per bound', () => {
    expect(emptyHistogram()).toHaveLength(UPSTREAM_LATENCY_BOUNDS_MS.length + 1);
    expect([...UPSTREAM_LATENCY_BOUNDS_MS].sort((a, b) => a - b)).toEqual(UPSTREAM_LATENCY_BOUNDS_MS);
  });
});
