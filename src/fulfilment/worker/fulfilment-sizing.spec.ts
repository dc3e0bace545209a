import { jobsClaimedAtOnce, leaseFor } from './fulfilment-worker';

/**
 * A job waiting for an upstream slot waits at most one exchange only while
 * no more jobs wait than there are slots; its lease must then outlast that
 * wait and its own exchange, or another instance would take the job over
 * and send the order while it is still at the upstream.
 */
describe('fulfilment sizing', () => {
  it.each([1, 2, 3, 4, 8, 255, 256, 10_000])('with %i slots: claims more jobs than slots, and no more waiting than slots', (slots) => {
    const claimed = jobsClaimedAtOnce(slots);
    expect(claimed).toBeGreaterThan(slots);
    expect(claimed - slots).toBeLessThanOrEqual(slots);
  });

  it('claims nothing with fulfilment off', () => {
    expect(jobsClaimedAtOnce(0)).toBe(0);
  });

  it.each([350, 13_000, 660_000])('a lease for %i ms exchanges outlasts a wait of one and its own, with a margin', (exchangeMs) => {
    expect(leaseFor(exchangeMs)).toBeGreaterThanOrEqual(2 * exchangeMs + 5_000);
  });
});
