/**
 * How long this machine's disk takes to make a small write durable right
 * now: an 8 kB write and `fdatasync`, as a commit's WAL flush does, about
 * 100 times a second. On a VM the virtual disk has stalled for hundreds of
 * milliseconds with the machine otherwise idle, and every commit caught in
 * such a stall (the service's and the CRUD server's alike) shows in a
 * load's p99. The benchmark prints this before and after the run, beside
 * the machine's speed. The file is written in `dir` (the system's temporary
 * directory by default): it speaks for Postgres only when Postgres's data
 * directory is on the same disk.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { percentile } from './load-generator';
import { sleep } from './processes';

export interface DiskReading {
  dir: string;
  /** How long the probe ran. */
  seconds: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Flushes that took longer than STALL_MS. */
  stalls: number;
}

export const STALL_MS = 50;

/** Flush times (ms) summed up. */
export function diskReading(dir: string, seconds: number, flushMs: readonly number[]): DiskReading {
  const sorted = Float64Array.from(flushMs).sort();
  return {
    dir,
    seconds,
    samples: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: percentile(sorted, 100),
    stalls: flushMs.filter((ms) => ms > STALL_MS).length,
  };
}

/** Writes and flushes 8 kB every 10 ms for about `ms`, then removes its file. */
export async function probeDisk(ms: number, parent = os.tmpdir()): Promise<DiskReading> {
  const dir = mkdtempSync(path.join(parent, 'bench-disk-probe-'));
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const page = Buffer.alloc(8192, 0x5a);
  const flushMs: number[] = [];
  const start = performance.now();
  try {
    const until = start + ms;
    while (performance.now() < until) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      flushMs.push(performance.now() - started);
      await sleep(10);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  return diskReading(parent, (performance.now() - start) / 1000, flushMs);
}

/** The probe as it ran: where, how often, how long. */
export function describeProbe(reading: DiskReading): string {
  return `an 8 kB write and fdatasync in ${reading.dir} ${(reading.samples / reading.seconds).toFixed(0)} times a second for ${reading.seconds.toFixed(0)} s`;
}

export function describeDisk(reading: DiskReading): string {
  return (
    `p50 ${reading.p50Ms.toFixed(2)} ms, p99 ${reading.p99Ms.toFixed(1)} ms, the longest ${reading.maxMs.toFixed(0)} ms, ` +
    `${reading.stalls} over ${STALL_MS} ms of ${reading.samples}`
  );
}
