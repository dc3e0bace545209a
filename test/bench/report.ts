/**
 * The benchmark's printout: the three systems side by side (the median over
 * the passes, with the lowest and highest in parentheses), the ratios within
 * each pass, the end-to-end phase, the whole-life phase, and the targets
 * next to what was measured.
 */
import os from 'node:os';
import { describeDisk, describeProbe, DiskReading } from './disk-probe';
import { EndToEndPhase } from './end-to-end';
import { endToEndChecks, endToEndSection, whileCompletingSection } from './end-to-end-report';
import { LoadResult, percentile } from './load-generator';
import { Measurement, ScenarioName } from './measure';
import { CoresUsed, otherCores, ThreadTime } from './processes';
import { Settings, SystemName } from './settings';
import { LABELS } from './systems';
import { median, Spread, table } from './tables';
import { atLeast, atMost, Check, verdict } from './targets';
import { WholeLifePhase } from './whole-life';
import { wholeLifeChecks, wholeLifeSection } from './whole-life-report';

/** Figures of one load: a scenario's, or the hot half of beside-hot. */
const rateOf = (r: LoadResult) => (r.elapsedMs > 0 ? r.accepted / (r.elapsedMs / 1000) : Number.NaN);
const failuresOf = (r: LoadResult) => [...r.failures.values()].reduce((a, b) => a + b, 0);

export const acceptedPerS = (m: Measurement) => rateOf(m.result);
const p50 = (m: Measurement) => percentile(m.result.latenciesMs, 50);
const p99 = (m: Measurement) => percentile(m.result.latenciesMs, 99);
const nonOk = (m: Measurement) => failuresOf(m.result) + (m.alongside ? failuresOf(m.alongside) : 0);
/** beside-hot's hot half. */
const hot = (f: (r: LoadResult) => number) => (m: Measurement) => (m.alongside ? f(m.alongside) : Number.NaN);
const cpuTotal = (m: Measurement) => (m.cpuMs ? m.cpuMs.server + m.cpuMs.postgres : Number.NaN);
/** A figure of the cores a measurement's load used; NaN where they were not read. */
const ofCores = (f: (cores: CoresUsed) => number) => (m: Measurement) => (m.cores ? f(m.cores) : Number.NaN);

export class Results {
  constructor(
    readonly measurements: Measurement[],
    readonly passes: number,
  ) {}

  of(system: SystemName, scenario: ScenarioName): Measurement[] {
    return this.measurements.filter((m) => m.system === system && m.scenario === scenario).sort((a, b) => a.pass - b.pass);
  }

  figure(system: SystemName, scenario: ScenarioName, f: (m: Measurement) => number): Spread {
    return new Spread(this.of(system, scenario).map(f));
  }

  /** a's figure over b's, within each pass. */
  ratio(a: SystemName, b: SystemName, scenario: ScenarioName, f: (m: Measurement) => number = acceptedPerS): Spread {
    return this.perPass(this.of(a, scenario), this.of(b, scenario), f);
  }

  /** One system's figure in scenario a over the same figure in scenario b, within each pass. */
  scenarioRatio(system: SystemName, a: ScenarioName, b: ScenarioName, f: (m: Measurement) => number): Spread {
    return this.perPass(this.of(system, a), this.of(system, b), f);
  }

  private perPass(xs: Measurement[], ys: Measurement[], f: (m: Measurement) => number): Spread {
    const values: number[] = [];
    for (let pass = 1; pass <= this.passes; pass++) {
      const x = xs.find((m) => m.pass === pass);
      const y = ys.find((m) => m.pass === pass);
      if (x && y) values.push(f(x) / f(y));
    }
    return new Spread(values);
  }

  /** The system's median closed-loop rate over many merchants: what the open-loop rates are fractions of. */
  maxRate(system: SystemName): number {
    return this.figure(system, 'spread', acceptedPerS).median;
  }
}

interface ReportInput {
  settings: Settings;
  results: Results;
  endToEnd?: EndToEndPhase;
  wholeLife?: WholeLifePhase;
  /** The service's commits a second while idle between loads (its pollers). */
  idleCommitsPerS?: number;
  loadAtStart: number;
  /** machineSpeed() before the first system started and after the last stopped. */
  speed: { atStart: number; atEnd: number };
  /** probeDisk() before the first system started and after the last stopped. */
  disk: { atStart: DiskReading; atEnd: DiskReading };
  notes: string[];
}

export function report({ settings, results, endToEnd, wholeLife, idleCommitsPerS, loadAtStart, speed, disk, notes }: ReportInput): string {
  const systems = settings.systems;
  const cpus = os.cpus();
  const lines = [
    '',
    `Machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()}; ` +
      `Node ${process.version}; load average (1 min) before the run ${loadAtStart.toFixed(2)}`,
    `Machine speed (a submit's signature and JSON.parse of its body, operations per ms of CPU, one core): ${speed.atStart.toFixed(0)} before the run, ` +
      `${speed.atEnd.toFixed(0)} after it (the same work both times: a difference is the machine's).`,
    `Disk (${describeProbe(disk.atStart)}, the machine otherwise idle): ` +
      `before the run ${describeDisk(disk.atStart)}; ` +
      `after it ${describeDisk(disk.atEnd)}. Every commit on that disk waits as long; the stalls land in the p99 of whichever loads they fall in.`,
    `Settings: ${settings.passes} pass${settings.passes === 1 ? '' : 'es'}, the order of the systems reversed every other pass; closed loop at concurrency ${settings.concurrency}, ` +
      (settings.requests !== undefined ? `${settings.requests} requests` : `${settings.durationS} s`) +
      ` per scenario after a ${settings.warmupS} s warm-up; ${settings.merchants} merchants in "spread"; event store ${process.env.EVENT_STORE ?? 'postgres'}; ` +
      `service with fulfilment ${settings.withFulfilment ? 'on' : 'off (FULFILMENT_CONCURRENCY=0)'} in the submit scenarios.`,
    'Figures: the median over the passes (lowest–highest). CPU ms: per accepted submit in the measured window, read at its edges under',
    "steady load, so the work that trails the replies (the service's projections) is included; the server's process and the Postgres",
    'processes for its database (Linux /proc). Commits: transactions committed in its database (pg_stat_database) per accepted submit over',
    'the whole load. "other": cores used meanwhile by everything else on the machine; when high, the run shared the machine with other work.',
    '',
  ];

  const row = (system: SystemName, scenario: ScenarioName, first: string[]) => {
    const fig = (f: (m: Measurement) => number, digits: number) => results.figure(system, scenario, f).show(digits);
    const runs = results.of(system, scenario);
    return [
      ...first,
      fig(acceptedPerS, 0),
      fig(p50, 1),
      fig(p99, 1),
      fig((m) => p99(m) / p50(m), 1),
      String(runs.reduce((n, m) => n + nonOk(m), 0)),
      fig(cpuTotal, 2),
      fig((m) => m.cpuMs?.postgres ?? Number.NaN, 2),
      fig((m) => m.commits ?? Number.NaN, 2),
      fig(ofCores(otherCores), 2),
    ];
  };
  const figures = ['accepted/s', 'p50 ms', 'p99 ms', 'p99/p50', 'non-2xx', 'CPU ms/accepted', 'of it Postgres', 'commits/accepted', 'other cores'];

  lines.push('Maximum rate: closed loop, "spread" over many merchants and "hot" on one merchant:', '');
  const closedRows = (['spread', 'hot'] as const).flatMap((scenario) => systems.map((system) => row(system, scenario, [scenario, LABELS[system]])));
  lines.push(...table(['scenario', 'system', ...figures], closedRows, 2), '');

  const steadySystems = systems.filter((s) => results.of(s, 'steady').length > 0);
  if (steadySystems.length > 0) {
    lines.push(`Steady: open loop over many merchants at ${settings.steadyFraction} of the same system's "spread" rate in the same pass:`, '');
    const steadyRows = steadySystems.map((system) =>
      row(system, 'steady', [LABELS[system], results.figure(system, 'steady', (m) => m.ratePerS ?? Number.NaN).show(0)]),
    );
    lines.push(...table(['system', 'offered/s', ...figures], steadyRows, 1), '');
  }

  const besideSystems = systems.filter((s) => results.of(s, 'beside-hot').length > 0);
  if (besideSystems.length > 0) {
    lines.push(
      'Beside a hot wallet: open loop at the "steady" rate, half of it over the many merchants and half on the hot one at the same time.',
      "The many merchants' latency, against all of \"steady\"'s in the same pass (÷ steady: within each pass); then the hot merchant's:",
      '',
    );
    const besideRows = besideSystems.map((system) => {
      const fig = (f: (m: Measurement) => number, digits: number) => results.figure(system, 'beside-hot', f).show(digits);
      const runs = results.of(system, 'beside-hot');
      return [
        LABELS[system],
        fig((m) => m.ratePerS ?? Number.NaN, 0),
        fig(p50, 1),
        fig(p99, 1),
        results.scenarioRatio(system, 'beside-hot', 'steady', p50).show(2),
        results.scenarioRatio(system, 'beside-hot', 'steady', p99).show(2),
        fig(hot(rateOf), 0),
        fig(
          hot((r) => percentile(r.latenciesMs, 99)),
          1,
        ),
        String(runs.reduce((n, m) => n + nonOk(m), 0)),
        fig(cpuTotal, 2),
      ];
    });
    lines.push(
      ...table(
        ['system', 'offered/s', 'others p50 ms', 'others p99 ms', 'p50 ÷ steady', 'p99 ÷ steady', 'hot accepted/s', 'hot p99 ms', 'non-2xx', 'CPU ms/accepted'],
        besideRows,
        1,
      ),
      '',
    );
  }

  lines.push(...silences(results, systems), '');

  const pairs: Array<[SystemName, SystemName]> = [
    ['service', 'crud'],
    ['service', 'bare'],
    ['crud', 'bare'],
  ];
  for (const [a, b] of pairs.filter(([a, b]) => systems.includes(a) && systems.includes(b))) {
    lines.push(
      `${LABELS[a]} ÷ ${LABELS[b]}, accepted/s within each pass: spread ${results.ratio(a, b, 'spread').show(3)}, hot ${results.ratio(a, b, 'hot').show(3)}`,
    );
  }
  lines.push('');

  for (const load of endToEnd?.loads ?? []) lines.push(...endToEndSection(settings, load), '');
  if (endToEnd) {
    const submitOnly = {
      cpuMs: results.figure('service', 'steady', cpuTotal).median,
      ratePerS: results.figure('service', 'steady', acceptedPerS).median,
      loadGeneratorCores: results.figure(
        'service',
        'steady',
        ofCores((cores) => cores.bench),
      ).median,
    };
    const completing = whileCompletingSection(settings, endToEnd, submitOnly);
    if (completing.length > 0) lines.push(...completing, '');
  }
  if (wholeLife) lines.push(...wholeLifeSection(settings, wholeLife), '');
  lines.push(...targets(settings, results, endToEnd, wholeLife, idleCommitsPerS), '');
  lines.push(...notes);
  return lines.join('\n');
}

/**
 * The longest time a request waited while no reply of any kind came: when
 * it is near a scenario's p99, the tail is a stall of everything in the
 * replies' path (the server, its database, the disk, the machine), not a
 * share of slow requests.
 */
function silences(results: Results, systems: readonly SystemName[]): string[] {
  const scenarios: ScenarioName[] = ['spread', 'hot', 'steady', 'beside-hot'];
  const longest = (m: Measurement) => Math.max(m.result.longestSilenceMs, m.alongside?.longestSilenceMs ?? 0);
  const rows = systems.map((system) => [
    LABELS[system],
    ...scenarios.map((scenario) => (results.of(system, scenario).length > 0 ? results.figure(system, scenario, longest).show(1) : '')),
  ]);
  return [
    'The longest a request waited with no reply of any kind coming meanwhile, ms (near the p99: the tail is a stall of everything in',
    "the replies' path, the server, its database, the disk or the machine, rather than some slow requests):",
    '',
    ...table(['system', ...scenarios], rows, 1),
  ];
}

function targets(settings: Settings, results: Results, e?: EndToEndPhase, life?: WholeLifePhase, idleCommitsPerS?: number): string[] {
  const has = (s: SystemName) => settings.systems.includes(s);
  const checks: Check[] = [];
  if (has('service') && has('crud')) {
    checks.push(
      { what: 'accepted/s ÷ CRUD, spread', target: '≥ 2.0', ok: atLeast(2), service: results.ratio('service', 'crud', 'spread'), digits: 3 },
      { what: 'accepted/s ÷ CRUD, hot wallet', target: '≥ 2.0', ok: atLeast(2), service: results.ratio('service', 'crud', 'hot'), digits: 3 },
    );
  }
  const both = (what: string, target: string, ok: (v: number) => boolean, scenario: ScenarioName, f: (m: Measurement) => number, digits: number) => {
    if (!has('service')) return;
    checks.push({
      what,
      target,
      ok,
      service: results.figure('service', scenario, f),
      crud: has('crud') ? results.figure('crud', scenario, f) : undefined,
      digits,
    });
  };
  both('CPU ms per accepted submit, spread (service + Postgres)', '≤ 1.5', atMost(1.5), 'spread', cpuTotal, 2);
  both('CPU ms per accepted submit, hot wallet', '≤ 1.5', atMost(1.5), 'hot', cpuTotal, 2);
  both('commits per accepted submit, spread', '≤ 2', atMost(2), 'spread', (m) => m.commits ?? Number.NaN, 2);
  both('commits per accepted submit, hot wallet', '≤ 2', atMost(2), 'hot', (m) => m.commits ?? Number.NaN, 2);
  both(`p99 ÷ p50 at ${settings.steadyFraction} of the maximum (steady)`, '≤ 4', atMost(4), 'steady', (m) => p99(m) / p50(m), 2);
  both(`non-2xx at ${settings.steadyFraction} of the maximum (steady)`, '0', (v) => v === 0, 'steady', nonOk, 0);
  if (idleCommitsPerS !== undefined)
    checks.push({ what: 'commits a second while idle (pollers)', target: '≤ 5', ok: atMost(5), service: new Spread([idleCommitsPerS]), digits: 1 });
  for (const load of e?.loads ?? []) checks.push(...endToEndChecks(load));
  if (life) checks.push(...wholeLifeChecks(life));
  if (checks.length === 0) return [];
  const rows = checks.map((c) => {
    const shown = c.service.values.some((v) => v === Infinity) ? `> ${settings.drainMaxS}` : c.service.show(c.digits);
    return [c.what, c.target, shown, c.crud ? c.crud.show(c.digits) : '', verdict(c)];
  });
  return [
    'Targets: the service measured against them (CRUD in the same run for comparison):',
    '',
    ...table(['figure', 'target', 'service', 'CRUD', 'met'], rows, 1),
  ];
}

/** The median share of the time the server's main thread ran or waited for a CPU, or n/a without schedstat. */
function mainThread(runs: readonly Measurement[], part: keyof ThreadTime): string {
  const shares = runs.flatMap((m) => (m.cores?.mainThread ? [m.cores.mainThread[part]] : []));
  return shares.length > 0 ? median(shares).toFixed(2) : 'n/a';
}

/** The CPU table in cores, medians: who used the machine during each measured load. */
export function coresTable(settings: Settings, results: Results): string[] {
  const rows: string[][] = [];
  for (const scenario of ['spread', 'hot', 'steady', 'beside-hot'] as const) {
    for (const system of settings.systems) {
      const runs = results.of(system, scenario).filter((m) => m.cores);
      if (runs.length === 0) continue;
      const f = (g: (c: NonNullable<Measurement['cores']>) => number) => median(runs.map((m) => g(m.cores!))).toFixed(2);
      rows.push([
        scenario,
        LABELS[system],
        f((c) => c.server),
        f((c) => c.postgres),
        f((c) => c.bench),
        f(otherCores),
        f((c) => c.machine),
        mainThread(runs, 'running'),
        mainThread(runs, 'waiting'),
        (median(runs.map((m) => m.idleAfterMs)) / 1000).toFixed(1),
      ]);
    }
  }
  if (rows.length === 0) return [];
  return [
    `CPU during the measured windows, in cores (of ${os.cpus().length}), medians: "server" the system's process, "postgres" the Postgres processes for its`,
    'database; "main thread": the share of the time the server\'s main thread (where it takes requests) ran, and the share it was ready',
    "to run but waited for a CPU (the scheduler's run queue: the other processes' and threads' turn); \"idle after\": from the end of the",
    'load until the server used under 5 % of a core for 1 s (1.0 = at once; more = a backlog):',
    '',
    ...table(
      ['scenario', 'system', 'server', 'postgres', 'load generator', 'other', 'whole machine', 'main thread ran', 'waited for a CPU', 'idle after, s'],
      rows,
      2,
    ),
  ];
}
