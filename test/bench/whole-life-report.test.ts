import { slotsLine } from './whole-life-report';
import { WholeLifePhase, WholeLifeRun } from './whole-life';

/** A phase whose service held `busy` of 256 slots on average in each pass, beside a peer that has none. */
const phase = (...busy: number[]): WholeLifePhase => ({
  runs: busy.flatMap((held, i) => [
    { system: 'service', pass: i + 1, upstreamSlots: { busy: held, of: 256 } } as WholeLifeRun,
    { system: 'peer', pass: i + 1 } as WholeLifeRun,
  ]),
  upstreamDelayMs: 200,
  checks: [],
});

describe("npm run bench, whole life: the service's upstream slots", () => {
  it('nearly all held in every pass: the slots bounded what it completed', () => {
    expect(slotsLine(phase(250.4, 231))).toEqual([
      "service's upstream slots held on average during the window, of its 256 (FULFILMENT_CONCURRENCY): pass 1 250.4, pass 2 231.0; " +
        'nearly all in every pass: the slots, not the CPU, bounded what it completed',
    ]);
  });

  it('under nine in ten held: slots to spare, so something else bounded it', () => {
    expect(slotsLine(phase(120, 229.9))[0]).toMatch(/pass 1 120\.0, pass 2 229\.9; slots to spare in every pass/);
  });

  it('says in how many passes when they differ', () => {
    expect(slotsLine(phase(255, 100))[0]).toMatch(/; nearly all in 1 of 2 passes$/);
  });

  it("prints nothing when the service's metrics could not be read", () => {
    expect(slotsLine({ runs: [{ system: 'service', pass: 1 } as WholeLifeRun], upstreamDelayMs: 200, checks: [] })).toEqual([]);
  });
});
