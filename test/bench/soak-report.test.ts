import { firstAndLast, firstAndLastTen, Minute } from './soak-report';

/** A soak's minute with the figures the summaries read; the rest zero. */
const minute = (n: number, acceptedPerS: number, p99: number): Minute => ({
  minute: n,
  acceptedPerS,
  p50: 0,
  p99,
  refused: new Map(),
  finalPerS: acceptedPerS,
  calledBackPerS: acceptedPerS,
  backlog: 0,
  rssMb: 500 + n,
  events: 0,
  serviceCpuMs: 0.5,
  postgresCpuMs: 0.7,
  blocksRead: 0,
  missed: 0,
  walBytes: 0,
  fullPageImages: 0,
});

/** 30 minutes: 1,000 accepted a second at p99 60 ms for the first ten, 900 at 70 for the last ten, one slow minute (500) at the end. */
const thirty = Array.from({ length: 30 }, (_, i) => {
  if (i === 29) return minute(30, 500, 90);
  return i < 20 ? minute(i + 1, 1000, 60) : minute(i + 1, 900, 70);
});

describe('npm run bench:soak: the summaries of its minutes', () => {
  it('gives the first two minutes against the last two', () => {
    const line = firstAndLast(thirty);
    expect(line).toContain('accepted/s 1000 -> 700');
    expect(line).toContain('p99 60.0 -> 80.0 ms');
    expect(line).toContain('RSS after the warm-up (minute 3) 503 MB, at the end 530 MB');
  });

  it('gives the means of the first ten minutes against the last ten, less moved by one slow minute', () => {
    // The last ten: nine at 900 and one at 500.
    expect(firstAndLastTen(thirty)).toBe('First ten minutes against the last ten (means): accepted/s 1000 -> 860, p99 60.0 -> 72.0 ms.');
  });

  it('says nothing of a run too short for two distinct stretches', () => {
    expect(firstAndLast(thirty.slice(0, 3))).toBe('');
    expect(firstAndLastTen(thirty.slice(0, 19))).toBe('');
    expect(firstAndLastTen(thirty.slice(0, 20))).toContain('accepted/s 1000 -> 1000');
  });
});
