import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeDisk, describeProbe, diskReading, probeDisk, STALL_MS } from './disk-probe';

describe("npm run bench: the disk's flush time", () => {
  it('sums flush times up: median, p99, the longest and the stalls over the threshold', () => {
    const flushMs = [...Array<number>(97).fill(0.4), 20, STALL_MS + 1, 300];
    const reading = diskReading('/var/tmp', 1.5, flushMs);
    expect(reading).toEqual({ dir: '/var/tmp', seconds: 1.5, samples: 100, p50Ms: 0.4, p99Ms: STALL_MS + 1, maxMs: 300, stalls: 2 });
    expect(describeDisk(reading)).toBe(`p50 0.40 ms, p99 51.0 ms, the longest 300 ms, 2 over ${STALL_MS} ms of 100`);
    // How often it flushed comes from the samples it took, not from a figure of its own.
    expect(describeProbe(reading)).toBe('an 8 kB write and fdatasync in /var/tmp 67 times a second for 2 s');
  });

  it('flushes a real file in the directory it is given and leaves nothing behind', async () => {
    const parent = mkdtempSync(path.join(os.tmpdir(), 'disk-probe-test-'));
    try {
      const reading = await probeDisk(200, parent);
      expect(reading.samples).toBeGreaterThan(0);
      expect(reading.maxMs).toBeGreaterThanOrEqual(reading.p50Ms);
      expect(reading.dir).toBe(parent);
      expect(reading.seconds).toBeGreaterThanOrEqual(0.2);
      expect(readdirSync(parent)).toEqual([]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
    expect(existsSync(parent)).toBe(false);
  });
});
