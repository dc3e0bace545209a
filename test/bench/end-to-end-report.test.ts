import { EndToEnd, EndToEndPhase } from './end-to-end';
import { endToEndChecks, endToEndFigures, whileCompletingSection } from './end-to-end-report';
import { verdict } from './targets';
import { readSettings } from './settings';

const settings = readSettings([], {});
/** Only what the section reads of a load. */
const load = (ratePerS: number, cpuMsPerOrder?: number, peersMsPerOrder?: number) => ({ ratePerS, cpuMsPerOrder, peersMsPerOrder }) as EndToEnd;
/** Steady at 790 submits a second: 2 ms each, the load generator on 0.158 of a core. */
const steady = { cpuMs: 2, ratePerS: 790, loadGeneratorCores: 0.158 };

describe('npm run bench: the end to end phase against the submit path', () => {
  it("compares a whole order's CPU with steady's submit and gives the cores the first load's rate comes to", () => {
    const phase: EndToEndPhase = { loads: [load(800, 2.5), load(400, 3)] };
    const [line] = whileCompletingSection(settings, phase, steady);
    expect(line).toContain('cost the service and Postgres 2.50 ms');
    expect(line).toContain('a submit alone 2.00 ms in "steady" (open loop at 790/s');
    expect(line).toContain('1.25 times as much');
    // 800 orders a second at 2.5 ms each.
    expect(line).toContain("the first load's 800 orders a second at that cost needs 2.00 cores");
  });

  it('says whether the closed loop completed orders as fast as it took them, and when its backlog was worked off', () => {
    const kept: EndToEndPhase = { loads: [], completing: { acceptedPerS: 600, finalPerS: 594, drainMs: 400 } };
    expect(whileCompletingSection(settings, kept, steady)).toEqual([
      expect.stringMatching(/600 accepted a second; 594 a second of them became final within the same window \(0\.99 of accepted.*called back 0\.4 s after it/),
    ]);
    const behind: EndToEndPhase = { loads: [], completing: { acceptedPerS: 600, finalPerS: 300 } };
    const [line] = whileCompletingSection(settings, behind, steady);
    expect(line).toContain('(0.50 of accepted');
    expect(line).toContain(`its orders were NOT all final within ${settings.drainMaxS} s`);
    expect(line).toContain('Cores in the window: n/a');
  });

  it('leaves the comparison out when a figure is missing (no CPU readings, or no steady scenario run)', () => {
    expect(whileCompletingSection(settings, { loads: [load(800)] }, steady)).toEqual([]);
    expect(
      whileCompletingSection(settings, { loads: [load(800, 2.5, 0.5)] }, { cpuMs: Number.NaN, ratePerS: Number.NaN, loadGeneratorCores: Number.NaN }),
    ).toEqual([]);
  });

  it('adds up what the first load takes of the machine before the service completes any order', () => {
    const phase: EndToEndPhase = { loads: [load(800, 2.5, 0.5)] };
    const [, floor] = whileCompletingSection(settings, phase, steady);
    // Submits 800 × 2 ms = 1.6 cores; the load generator 0.158 × 800 / 790 = 0.16; the upstream and receiver 800 × 0.5 ms = 0.4.
    expect(floor).toContain("the first load's 800 orders a second would take 2.16 cores");
    expect(floor).toContain('their submits 1.60');
    expect(floor).toContain('the load generator 0.16');
    expect(floor).toContain('the upstream and the receiver 0.40 (0.50 ms an order');
    // Without the peers' CPU (no /proc), the line is left out.
    expect(whileCompletingSection(settings, { loads: [load(800, 2.5)] }, steady)).toHaveLength(1);
  });
});

describe('npm run bench: the end to end targets of a load', () => {
  /** A load of 1,000 orders a second offered for 10 s, `accepted` of them accepted while sending, each final `finalAfterMs` after, latencies p50 1 and p99 `p99` ms. */
  const measured = (accepted: number, p99: number, finalAfterMs = 0): EndToEnd => {
    const acceptedTimes = Array.from({ length: accepted }, (_, i) => ((i + 1) * 10_000) / accepted);
    const finalTimes = acceptedTimes.map((t) => t + finalAfterMs);
    const latenciesMs = Array.from({ length: 100 }, (_, i) => (i < 98 ? 1 : p99));
    return {
      ratePerS: 1000,
      label: 'end to end',
      upstreamDelayMs: 200,
      sendMs: 10_000,
      loadMs: 10_000,
      drainMs: 400,
      waitedMs: 400,
      timeline: { accepted: acceptedTimes, final: finalTimes, calledBack: finalTimes, readModel: [] },
      result: { latenciesMs, failures: new Map() },
    } as unknown as EndToEnd;
  };
  const row = (load: EndToEnd, what: string) => endToEndChecks(load).find((check) => check.what.endsWith(what))!;

  it("judges a carried load's submits by their p99 ÷ p50", () => {
    expect(verdict(row(measured(9_800, 3), 'accepted while sending ÷ offered'))).toBe('yes');
    expect(verdict(row(measured(9_800, 3), 'p99 ÷ p50 of the submits'))).toBe('yes');
    expect(verdict(row(measured(9_800, 5), 'p99 ÷ p50 of the submits'))).toBe('NO');
  });

  it('leaves the p99 ÷ p50 of a load it did not carry unjudged, and says why', () => {
    const behind = measured(5_800, 3);
    expect(verdict(row(behind, 'accepted while sending ÷ offered'))).toBe('NO');
    expect(verdict(row(behind, 'p99 ÷ p50 of the submits'))).toBe('not judged: load not carried');
    expect(row(behind, 'p99 ÷ p50 of the submits').service.values).toEqual([3]);
    expect(verdict(row(behind, 'accepted/s during the load'))).toBe('yes');
  });

  it("counts the orders final in a window as long as the load, the upstream's delay later", () => {
    // Every order final 300 ms after its acceptance: the 200 ms the upstream takes, and 100 ms of the service's.
    const kept = measured(9_800, 3, 300);
    expect(endToEndFigures(kept).finalPerAccepted).toBeCloseTo(0.99, 3);
    expect(verdict(row(kept, 'accepted/s during the load'))).toBe('yes');
    // Two seconds behind: a tenth of the load's orders not final in that window.
    expect(endToEndFigures(measured(9_800, 3, 2_200)).finalPerAccepted).toBeCloseTo(0.8, 3);
    expect(verdict(row(measured(9_800, 3, 2_200), 'accepted/s during the load'))).toBe('NO');
  });
});
