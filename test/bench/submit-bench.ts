/**
 * `npm run bench`: the whole picture of a signed submit, side by side in one
 * run, on the same machine. Three systems get the same signed
 * `POST /api/v2/topup/submit` load over HTTP:
 *   - the service, a child process on a fresh database (fulfilment off during
 *     these scenarios unless --with-fulfilment, so that its figures are the
 *     submit path and its projections);
 *   - a conventional CRUD server (crud-server.ts) on its own fresh database:
 *     the same signature check and durable nonce, then one transaction that
 *     inserts the order and freezes the funds with a conditional update;
 *   - a bare node:http server that only verifies the HMAC (baseline-server.ts).
 * Each pass runs every system through its scenarios: "spread" (closed loop
 * over many merchants: the maximum rate), "hot" (closed loop, one merchant)
 * and, for the two with a database, "steady" (open loop over many merchants at
 * --steady times the system's own "spread" rate of that pass) and
 * "beside-hot" (the same rate, half of it over the many merchants and half on
 * the hot one at once: whether a hot wallet slows the others). The order of
 * the systems is reversed every other pass. Then the end-to-end phase: the
 * service with its defaults on another fresh database, open loop at --steady
 * times its median "spread" rate, counting orders final and callbacks
 * acknowledged each second, and the time to drain the backlog; then a closed
 * loop on the same service, which completes orders as it takes them, and the
 * same open-loop load at --steady times what that closed loop accepted.
 * Last the whole-life phase (whole-life.ts): the service and a conventional
 * implementation of the whole order life (crud-fulfilment.ts) under the same
 * closed loop, against the same upstream and callback receiver, comparing
 * orders completed per second and CPU per completed order.
 *
 * Per scenario: accepted/s, p50/p99, non-2xx, CPU ms per accepted submit of
 * the server and of Postgres for its database (Linux /proc, from the start of
 * the load until the server is idle again), commits per accepted submit
 * (pg_stat_database.xact_commit). Printed: the median over the passes with
 * the lowest and highest, the ratios within each pass, and the issue's targets
 * next to the measured figures. It measures; it asserts nothing, except that
 * the CRUD server's answers and ledger are right (exit code 1 if not).
 *
 * Settings, as --name=value (or --name value) or the environment variable:
 *   --concurrency     CONCURRENCY      32    closed loop: requests in flight; open loop: connections at most
 *   --duration        DURATION_S       5     seconds of measured load per scenario
 *   --requests        REQUESTS         -     a fixed number of requests per scenario instead of a duration
 *   --warmup          WARMUP_S         2     seconds of unmeasured load before each scenario
 *   --merchants       MERCHANTS        50    merchants of "spread", "steady" and the end-to-end phase
 *   --passes          PASSES           2     passes over the systems
 *   --systems         BENCH_SYSTEMS    service,crud,bare   which systems to run
 *   --steady          STEADY_FRACTION  0.7   open-loop rate as a fraction of the system's maximum
 *   --e2e             E2E_S            10    seconds of load in the end-to-end phase; 0 leaves it out
 *   --e2e-rate        E2E_RATE         -     the end-to-end phase's offered orders/s, instead of the
 *                                            "steady" fraction of the service's spread rate; the phase
 *                                            then runs that one load
 *   --e2e-warmup      E2E_WARMUP_S     5     seconds of load at that rate before the end-to-end phase's
 *                                            measured load (its service is a new process)
 *   --whole-life      WHOLE_LIFE_S     15    seconds of closed-loop load per system and pass in the whole-life
 *                                            phase; 0 leaves it out
 *   --drain-max       DRAIN_MAX_S      60    longest wait for the end-to-end backlog after the load
 *   --with-fulfilment BENCH_WITH_FULFILMENT  fulfilment on in the service's submit scenarios too
 *                                            (each then waits until the service has worked off its orders)
 *   --cpu-prof        BENCH_CPU_PROF         profile the service during its first pass and the
 *                                            end-to-end phase; the value is a folder (default: a
 *                                            temporary one)
 * The database server comes from DATABASE_URL or PG* (default 127.0.0.1:5432,
 * user postgres), as for the tests; EVENT_STORE and the service's other
 * variables pass through to it.
 */
import os from 'node:os';
import { log, onCleanUp, runBench } from './clean-up';
import { crudLedgerCheck } from './crud-check';
import { endToEnd, EndToEndPhase } from './end-to-end';
import { CommitCounts } from './commit-count';
import { acceptedOverall, measure, Measurement, ScenarioName } from './measure';
import { profileWindow, ProfileTaken, statementSummary } from './profiler';
import { summariseProfile } from './profile-summary';
import { acceptedPerS, coresTable, report, Results } from './report';
import { machineSpeed } from './machine-speed';
import { probeDisk } from './disk-probe';
import { readSettings, Settings } from './settings';
import { startSystem, System } from './systems';
import { wholeLife, WholeLifePhase } from './whole-life';

interface Profile {
  name: string;
  taken: ProfileTaken;
  accepted: number;
}

const SCENARIOS: readonly ScenarioName[] = ['spread', 'hot', 'steady', 'beside-hot'];

/**
 * Every pass runs each scenario on each system in turn, the systems' order
 * reversed every other pass; a system's loads are thus far enough apart for
 * its commit counts to be published in between (commit-count.ts).
 */
async function passes(settings: Settings, systems: System[], commits: CommitCounts, profiles: Profile[]): Promise<Measurement[]> {
  const measurements: Measurement[] = [];
  for (let pass = 1; pass <= settings.passes; pass++) {
    const order = pass % 2 === 1 ? systems : [...systems].reverse();
    log(`pass ${pass} of ${settings.passes}: ${order.map((s) => s.label).join(', ')}`);
    for (const scenario of SCENARIOS) {
      for (const system of order) {
        let ratePerSecond: number | undefined;
        if (scenario === 'steady' || scenario === 'beside-hot') {
          const spread = measurements.find((m) => m.system === system.name && m.scenario === 'spread' && m.pass === pass);
          ratePerSecond = spread && settings.steadyFraction * acceptedPerS(spread);
          if (system.name === 'bare' || !ratePerSecond) continue;
        }
        // The service's first pass, when asked for.
        const profile = settings.cpuProfDir && system.name === 'service' && pass === 1 ? profileWindow(system.child) : undefined;
        const before = await commits.beforeLoad(system);
        const m = await measure(system, scenario, pass, settings, { ratePerSecond, onWindow: profile?.onWindow });
        commits.afterLoad(system, before, m, m.idleAt);
        const taken = profile?.taken();
        if (taken) profiles.push({ name: scenario, taken, accepted: m.result.accepted });
        measurements.push(m);
      }
    }
  }
  await commits.finish();
  return measurements;
}

/** How long the disk's flush time is sampled before the run and after it. */
const DISK_PROBE_MS = 10_000;

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2), process.env);
  const loadAtStart = os.loadavg()[0];
  const speedAtStart = machineSpeed();
  const diskAtStart = await probeDisk(DISK_PROBE_MS);
  const commits = await CommitCounts.open();
  onCleanUp('close the statistics connection', () => commits.close());

  const systems: System[] = [];
  for (const name of settings.systems) {
    const system = await startSystem(name, settings);
    commits.started(system);
    systems.push(system);
  }
  const profiles: Profile[] = [];
  const results = new Results(await passes(settings, systems, commits, profiles), settings.passes);

  const notes: string[] = [];
  const background = systems.filter((s) => commits.background.has(s)).map((s) => `${s.label} ${commits.background.get(s)!.toFixed(1)}/s`);
  if (background.length > 0) notes.push(`Commits while idle between loads (pollers), left out of the commits per accepted submit: ${background.join(', ')}.`);
  let failed = false;
  const crud = systems.find((s) => s.name === 'crud');
  if (crud) {
    const runs = results.measurements.filter((m) => m.system === 'crud');
    // The self-check at start-up placed one order.
    const check = await crudLedgerCheck(crud.db!.pool, 1 + runs.reduce((n, m) => n + acceptedOverall(m), 0));
    notes.push(check.text);
    failed = !check.ok;
  }
  for (const system of systems) await system.child.stop();

  let e2e: EndToEndPhase | undefined;
  if (settings.systems.includes('service') && settings.endToEndS > 0) {
    const byHand = settings.endToEndRate !== undefined;
    const rate = settings.endToEndRate ?? settings.steadyFraction * results.maxRate('service');
    if (rate > 0)
      e2e = await endToEnd(settings, {
        ratePerS: rate,
        basis: byHand ? 'as --e2e-rate gave it' : `${settings.steadyFraction} of the service's median "spread" rate above, with fulfilment off`,
        // The targets' load is the steady fraction of the maximum: a rate given by hand is named in each row.
        label: byHand ? `end to end at ${rate.toFixed(0)}/s (--e2e-rate)` : `end to end at ${settings.steadyFraction} of the submit-only maximum`,
      });
  }

  let life: WholeLifePhase | undefined;
  if (settings.systems.includes('service') && settings.wholeLifeS > 0) {
    life = await wholeLife(settings);
    if (life.checks.some((c) => !c.ok)) failed = true;
  }

  for (const m of results.measurements) {
    if (m.result.failures.size > 0) {
      const detail = [...m.result.failures].map(([status, n]) => `${status} x${n}${m.result.samples.has(status) ? ` ${m.result.samples.get(status)}` : ''}`);
      notes.push(`non-2xx in pass ${m.pass}, ${m.system}, ${m.scenario}: ${detail.join('; ')}`);
    }
    if (m.result.otherSuccess.size > 0) {
      notes.push(`2xx other than 202 in pass ${m.pass}, ${m.system}, ${m.scenario}: ${[...m.result.otherSuccess].map(([s, n]) => `${s} x${n}`).join(', ')}`);
    }
  }
  const speed = { atStart: speedAtStart, atEnd: machineSpeed() };
  const disk = { atStart: diskAtStart, atEnd: await probeDisk(DISK_PROBE_MS) };
  const service = systems.find((s) => s.name === 'service');
  const idleCommitsPerS = service && commits.background.get(service);
  console.log(report({ settings, results, endToEnd: e2e, wholeLife: life, idleCommitsPerS, loadAtStart, speed, disk, notes }));
  console.log(['', ...coresTable(settings, results)].join('\n'));
  const threads = (taken: ProfileTaken) =>
    taken.threadPaths.map((path) => `\n${summariseProfile(path, "CPU profile of the service's projections thread")}`).join('');
  for (const { name, taken, accepted } of profiles) {
    console.log(`\n${name}: ${summariseProfile(taken.path)}${threads(taken)}\n${statementSummary(taken, accepted)}`);
  }
  const profiled = e2e?.loads[0];
  if (profiled?.profile) {
    const orders = profiled.timeline.accepted.length;
    console.log(
      `\nend to end (the load and the drain, per accepted order): ${summariseProfile(profiled.profile.path)}${threads(profiled.profile)}\n${statementSummary(profiled.profile, orders, 'accepted order')}`,
    );
  }
  if (failed) process.exitCode = 1;
}

runBench(main);
