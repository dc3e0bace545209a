/** The soak's minutes, and the summaries `npm run bench:soak` prints of them (test/bench/soak.ts). */

export interface Minute {
  minute: number;
  acceptedPerS: number;
  p50: number;
  p99: number;
  refused: Map<string, number>;
  finalPerS: number;
  /** Orders called back a second (NaN with callbacks off). */
  calledBackPerS: number;
  backlog: number;
  rssMb: number;
  events: number;
  /** CPU per accepted order: the service's process (the simulator in it), and its database's Postgres processes; NaN without /proc. */
  serviceCpuMs: number;
  postgresCpuMs: number;
  /** Per accepted order: blocks read from outside shared buffers, the share of block accesses that missed them, WAL bytes, full-page images. */
  blocksRead: number;
  missed: number;
  walBytes: number;
  fullPageImages: number;
}

/** The mean of one figure over some minutes. */
function mean(rows: readonly Minute[], figure: (m: Minute) => number): number {
  return rows.reduce((n, m) => n + figure(m), 0) / rows.length;
}

/** One figure's mean over the first minutes, then over the last: `1000 -> 860`. */
function moved(first: readonly Minute[], last: readonly Minute[], figure: (m: Minute) => number, digits: number): string {
  return `${mean(first, figure).toFixed(digits)} -> ${mean(last, figure).toFixed(digits)}`;
}

/** The CPU an order cost over some minutes: the service's + its database's. */
const cpu = (rows: readonly Minute[]) => `${mean(rows, (m) => m.serviceCpuMs).toFixed(2)} + ${mean(rows, (m) => m.postgresCpuMs).toFixed(2)}`;

/** The first two minutes against the last two: whether intake and its tail stayed flat. */
export function firstAndLast(minutes: readonly Minute[]): string {
  if (minutes.length < 4) return '';
  const first = minutes.slice(0, 2);
  const last = minutes.slice(-2);
  const warm = minutes[Math.min(2, minutes.length - 1)];
  return (
    `First two minutes against the last two: accepted/s ${moved(first, last, (m) => m.acceptedPerS, 0)}, ` +
    `p99 ${moved(first, last, (m) => m.p99, 1)} ms, final/s ${moved(first, last, (m) => m.finalPerS, 0)}, ` +
    `CPU ms an order ${cpu(first)} -> ${cpu(last)} (service + Postgres); ` +
    `RSS after the warm-up (minute ${warm.minute}) ${warm.rssMb.toFixed(0)} MB, at the end ${minutes[minutes.length - 1].rssMb.toFixed(0)} MB.`
  );
}

/** The first ten minutes against the last ten, means of the minutes: less moved by one slow minute than the first and last two. */
export function firstAndLastTen(minutes: readonly Minute[]): string {
  if (minutes.length < 20) return '';
  const first = minutes.slice(0, 10);
  const last = minutes.slice(-10);
  return `First ten minutes against the last ten (means): accepted/s ${moved(first, last, (m) => m.acceptedPerS, 0)}, p99 ${moved(first, last, (m) => m.p99, 1)} ms.`;
}
