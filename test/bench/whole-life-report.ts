/** The whole-life phase's printout (whole-life.ts): a table per system, the ratios within each pass, and its targets. */
import { Settings } from './settings';
import { atLeast, atMost, Check } from './targets';
import { Spread, table } from './tables';
import { WHOLE_LIFE_LABELS, WholeLifePhase, WholeLifeRun, WholeLifeSystem } from './whole-life';

const SYSTEMS: readonly WholeLifeSystem[] = ['service', 'peer'];

const spreadOf = (phase: WholeLifePhase, system: WholeLifeSystem, f: (r: WholeLifeRun) => number) =>
  new Spread(phase.runs.filter((r) => r.system === system).map(f));

/** service ÷ peer within each pass. */
function ratio(phase: WholeLifePhase, f: (r: WholeLifeRun) => number): Spread {
  const values: number[] = [];
  for (const run of phase.runs.filter((r) => r.system === 'service')) {
    const peer = phase.runs.find((r) => r.system === 'peer' && r.pass === run.pass);
    if (peer) values.push(f(run) / f(peer));
  }
  return new Spread(values);
}

const nonOk = (r: WholeLifeRun) => [...r.result.failures.values()].reduce((n, v) => n + v, 0);
/** Infinity when the drain did not end within --drain-max, so the table says so. */
const drainS = (r: WholeLifeRun) => (r.drainMs === undefined ? Infinity : r.drainMs / 1000);

export function wholeLifeSection(settings: Settings, phase: WholeLifePhase): string[] {
  const rows = SYSTEMS.map((system) => {
    const fig = (f: (r: WholeLifeRun) => number, digits: number) => {
      const s = spreadOf(phase, system, f);
      return s.values.includes(Infinity) ? `> ${settings.drainMaxS}` : s.show(digits);
    };
    const runs = phase.runs.filter((r) => r.system === system);
    return [
      WHOLE_LIFE_LABELS[system],
      fig((r) => r.completedPerS, 0),
      fig((r) => r.result.accepted / (r.result.elapsedMs / 1000), 0),
      fig((r) => r.p50Ms, 1),
      fig((r) => r.p99Ms, 1),
      fig(drainS, 2),
      fig((r) => r.cpuMsPerCompleted, 2),
      fig((r) => r.postgresMsPerCompleted, 2),
      String(runs.reduce((n, r) => n + nonOk(r), 0)),
      fig((r) => r.commitsPerOrder, 2),
      fig((r) => r.rowsWrittenPerOrder, 1),
      fig((r) => r.walBytesPerOrder, 0),
    ];
  });
  return [
    `Whole life: closed loop at concurrency ${settings.concurrency} over ${settings.merchants} merchants, ${settings.wholeLifeS} s per system and pass after a ` +
      `${settings.warmupS} s warm-up, fulfilment and callbacks on; the same upstream simulator process (${phase.upstreamDelayMs} ms delivery) and callback`,
    'receiver for both. Completed: called back and acknowledged during the window. CPU: the server and Postgres for its database from the',
    "window's start until the load's last order was called back, per order called back in that span. Drain: after the window, until the last.",
    "Per order, Postgres's work for the load's accepted orders (warm-up included) until all were called back: commits, rows written",
    "(inserted, updated, deleted) and WAL bytes; the service's pollers are in them too.",
    '',
    ...table(
      [
        'system',
        'completed/s',
        'accepted/s',
        'p50 ms',
        'p99 ms',
        'drain s',
        'CPU ms/completed',
        'of it Postgres',
        'non-2xx',
        'commits/order',
        'rows/order',
        'WAL B/order',
      ],
      rows,
      1,
    ),
    '',
    `service ÷ whole-life peer within each pass: completed/s ${ratio(phase, (r) => r.completedPerS).show(3)}, ` +
      `CPU ms per completed order ${ratio(phase, (r) => r.cpuMsPerCompleted).show(3)}`,
    ...slotsLine(phase),
    ...phase.checks.map((c) => c.text),
  ];
}

/** The share of the slots held on average above which they, rather than the CPU, bounded what the service completed. */
const SLOTS_BOUND_AT = 0.9;

/** The service's upstream slots in use over each pass's window, and whether they bounded what it completed. */
export function slotsLine(phase: WholeLifePhase): string[] {
  const runs = phase.runs.filter((r) => r.system === 'service' && r.upstreamSlots);
  if (runs.length === 0) return [];
  const each = runs.map((r) => `pass ${r.pass} ${r.upstreamSlots!.busy.toFixed(1)}`).join(', ');
  const bound = runs.filter((r) => r.upstreamSlots!.busy >= SLOTS_BOUND_AT * r.upstreamSlots!.of).length;
  const verdict =
    bound === runs.length
      ? 'nearly all in every pass: the slots, not the CPU, bounded what it completed'
      : bound === 0
        ? 'slots to spare in every pass: they did not bound what it completed'
        : `nearly all in ${bound} of ${runs.length} passes`;
  return [`service's upstream slots held on average during the window, of its ${runs[0].upstreamSlots!.of} (FULFILMENT_CONCURRENCY): ${each}; ${verdict}`];
}

export function wholeLifeChecks(phase: WholeLifePhase): Check[] {
  return [
    {
      what: 'completed orders/s ÷ the whole-life peer',
      target: '≥ 2.0',
      ok: atLeast(2),
      service: ratio(phase, (r) => r.completedPerS),
      digits: 3,
    },
    {
      what: 'CPU ms per completed order (service + Postgres)',
      target: '≤ 1.0',
      ok: atMost(1),
      service: spreadOf(phase, 'service', (r) => r.cpuMsPerCompleted),
      crud: spreadOf(phase, 'peer', (r) => r.cpuMsPerCompleted),
      digits: 2,
    },
    {
      what: 'whole life: drain after the load, s',
      target: '≤ 5',
      ok: atMost(5),
      service: spreadOf(phase, 'service', drainS),
      crud: spreadOf(phase, 'peer', drainS),
      digits: 2,
    },
  ];
}
