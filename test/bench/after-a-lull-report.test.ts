import { Burst, lullTable } from './after-a-lull-report';

const burst = (latencies: number[], newConnections: number, failures = 0): Burst => ({
  latenciesMs: Float64Array.from([...latencies].sort((a, b) => a - b)),
  failures,
  newConnections,
});

/** 100 submits: 98 at `typical` ms, then the tail. */
const hundred = (typical: number, tail: [number, number]) => [...Array<number>(98).fill(typical), ...tail];

describe("bench:lull's printout", () => {
  it('gives each setting the median over its bursts, with the lowest and highest', () => {
    const [header, , kept, closed] = lullTable([
      { setting: 'kept', bursts: [burst(hundred(10, [40, 45]), 0), burst(hundred(12, [50, 60]), 0), burst(hundred(14, [30, 90]), 1)] },
      { setting: 'closed', bursts: [burst(hundred(40, [200, 250]), 9), burst(hundred(30, [100, 120]), 7, 2)] },
    ]);
    expect(header).toContain('connections opened');
    const cells = (row: string) =>
      row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
    // p99 of 100 submits is the 99th: the lower of the two tail values.
    expect(cells(kept)).toEqual(['kept', '3', '12.0 (10.0–14.0)', '40.0 (30.0–50.0)', '60.0 (45.0–90.0)', '0 (0–1)', '0']);
    expect(cells(closed)).toEqual(['closed', '2', '35.0 (30.0–40.0)', '150.0 (100.0–200.0)', '185.0 (120.0–250.0)', '8 (7–9)', '2']);
  });
});
