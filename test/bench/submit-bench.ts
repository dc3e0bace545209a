/**
 * `npm run bench`: signed submits over HTTP at a fixed concurrency against the
 * real service (a child process on a fresh database), spread over many
 * merchants and then all on one merchant, and the same load against a bare
 * node:http server that only parses the body and verifies the HMAC. Prints a
 * table and the service/baseline ratios. It measures; it asserts nothing.
 *
 * Settings, as --name=value (or --name value) or the environment variable:
 *   --concurrency  CONCURRENCY  32   requests in flight, one keep-alive socket each
 *   --duration     DURATION_S   10   seconds of measured load per scenario
 *   --requests     REQUESTS     -    a fixed number of requests per scenario instead of a duration
 *   --warmup       WARMUP_S     2    seconds of unmeasured load before each scenario
 *   --merchants    MERCHANTS    50   merchants of the "many merchants" scenario
 *   --cpu-prof     BENCH_CPU_PROF    profile the service during its scenarios; the value
 *                                    is a folder (default: a temporary one)
 * The database server comes from DATABASE_URL or PG* (default 127.0.0.1:5432,
 * user postgres), as for the tests; EVENT_STORE and the service's other
 * variables pass through to it.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { Credentials, LoadResult, percentile, runLoad } from './load-generator';
import { Child, coresUsed, CpuSnapshot, cpuSnapshot, freePort, sleep, startNodeChild, waitForHttp200, waitUntilIdle } from './processes';
import { markdownTable } from './markdown-table';
import { summariseProfile } from './profile-summary';

const PRODUCT_ID = 'bench';
const SKU_ID = 'bench-1';
const PRICE = '1.00';
/** Per merchant: a hundred million orders at 1.00, more than any run can place. */
const DEPOSIT = '100000000.00';
const RATE_LIMIT = 100_000; // the back office's maximum
const SERVICE_START_TIMEOUT_MS = 180_000;
const BACK_OFFICE_ATTEMPTS = 6;
const BACK_OFFICE_RETRY_DELAY_MS = 20_000;
/** How long to let the service work off one scenario's orders (fulfilment, projections, callbacks) before the next. */
const SETTLE_MAX_MS = 300_000;

interface Settings {
  concurrency: number;
  durationS: number;
  requests?: number;
  warmupS: number;
  merchants: number;
  cpuProfDir?: string;
}

interface ScenarioResult {
  name: string;
  result: LoadResult;
  /** Cores used on average during the measured run, by whom (Linux only). */
  cores?: CpuSnapshot;
}

const log = (message: string) => console.error(`[bench] ${message}`);

// ---------------------------------------------------------------- settings

function readSettings(argv: string[], env: NodeJS.ProcessEnv): Settings {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(usage());
      process.exit(0);
    }
    const match = arg.match(/^--([a-z-]+)(?:=(.*))?$/);
    if (!match) throw new Error(`unexpected argument ${arg}\n${usage()}`);
    const [, name, inline] = match;
    if (inline !== undefined) args.set(name, inline);
    else if (name === 'cpu-prof' && (argv[i + 1] === undefined || argv[i + 1].startsWith('--'))) args.set(name, '');
    else args.set(name, argv[++i] ?? '');
  }
  const known = new Set(['concurrency', 'duration', 'requests', 'warmup', 'merchants', 'cpu-prof']);
  for (const name of args.keys()) if (!known.has(name)) throw new Error(`unknown option --${name}\n${usage()}`);

  const number = (name: string, variable: string, fallback: number | undefined, min: number): number | undefined => {
    const raw = args.get(name) ?? env[variable];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} / ${variable} must be a number >= ${min}, got ${raw}`);
    return value;
  };
  const integer = (name: string, variable: string, fallback: number | undefined, min: number) => {
    const value = number(name, variable, fallback, min);
    if (value !== undefined && !Number.isInteger(value)) throw new Error(`--${name} / ${variable} must be an integer, got ${value}`);
    return value;
  };
  const cpuProf = args.has('cpu-prof') ? args.get('cpu-prof') : env.BENCH_CPU_PROF;
  return {
    concurrency: integer('concurrency', 'CONCURRENCY', 32, 1)!,
    durationS: number('duration', 'DURATION_S', 10, 0.1)!,
    requests: integer('requests', 'REQUESTS', undefined, 1),
    warmupS: number('warmup', 'WARMUP_S', 2, 0)!,
    merchants: integer('merchants', 'MERCHANTS', 50, 1)!,
    cpuProfDir:
      cpuProf === undefined || cpuProf === '0' || cpuProf === 'false'
        ? undefined
        : cpuProf === '' || cpuProf === '1' || cpuProf === 'true'
          ? join(os.tmpdir(), `topup-bench-profiles-${process.pid}`)
          : cpuProf,
  };
}

function usage(): string {
  return [
    'usage: npm run bench [-- --concurrency N] [--duration S | --requests N] [--warmup S] [--merchants N] [--cpu-prof [DIR]]',
    'or the variables CONCURRENCY, DURATION_S, REQUESTS, WARMUP_S, MERCHANTS, BENCH_CPU_PROF.',
  ].join('\n');
}

// ---------------------------------------------------------------- clean-up

const cleanups: Array<{ what: string; run: () => Promise<void> }> = [];
let cleaning: Promise<void> | undefined;
let interrupted = false;

function onCleanUp(what: string, run: () => Promise<void>): void {
  cleanups.push({ what, run });
}

function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const { what, run } of cleanups.reverse()) {
      try {
        await run();
      } catch (error) {
        log(`clean-up: could not ${what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (cleaning) {
      log(`${signal} again: exiting without finishing the clean-up`);
      process.exit(130);
    }
    interrupted = true;
    log(`${signal}: stopping and cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- the service

class RouteMissing extends Error {}

interface Service {
  child: Child;
  url: string;
}

async function startService(db: TestDatabase, adminToken: string, settings: Settings): Promise<Service> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...db.env,
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
    SECRETS_KEY: randomBytes(32).toString('hex'),
  };
  if (settings.cpuProfDir) env.BENCH_CPU_PROF_DIR = settings.cpuProfDir;
  const child = startNodeChild('service', 'src/main.ts', env);
  onCleanUp('stop the service', () => child.stop());
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp200(`${url}/health`, child, SERVICE_START_TIMEOUT_MS);
  } catch (error) {
    await child.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nservice output:\n${child.logTail()}`);
  }
  return { child, url };
}

/** One back-office call; the data of its success envelope. A 404 for an unknown route is a RouteMissing. */
async function admin(service: Service, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.ok && json?.success === true) return json.data;
  if (response.status === 404 && json?.code === 'NOT_FOUND') throw new RouteMissing(`${method} ${path}: 404 ${text}`);
  throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
}

/** Product, SKU, and `count` merchants, each funded and priced; through the back-office API (contract §3). */
async function provision(service: Service, token: string, count: number): Promise<Credentials[]> {
  await admin(service, token, 'PUT', `/admin/v1/products/${PRODUCT_ID}`, { name: 'Benchmark product' });
  await admin(service, token, 'PUT', `/admin/v1/skus/${SKU_ID}`, {
    product_id: PRODUCT_ID,
    name: 'Benchmark SKU',
    required_account_fields: [],
    supports_account_check: false,
    on_shelf: true,
  });
  const merchants: Credentials[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const created = await admin(service, token, 'POST', '/admin/v1/merchants', { name: `Bench merchant ${i + 1}`, currency: 'USD', rate_limit_per_second: RATE_LIMIT });
      const id = encodeURIComponent(created.merchant_id);
      await admin(service, token, 'POST', `/admin/v1/merchants/${id}/deposits`, { amount: DEPOSIT, reference: `bench-funding-${i + 1}` });
      await admin(service, token, 'PUT', `/admin/v1/merchants/${id}/prices/${SKU_ID}`, { price: PRICE });
      merchants[i] = { apiKey: created.api_key, appSecret: created.app_secret };
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, count) }, worker));
  return merchants;
}

/**
 * Starts the service and provisions it. The back office may still be in the
 * making: while its routes answer 404, stop, wait and start again (the tree
 * is run from source, so a restart picks up new routes).
 */
async function startProvisionedService(db: TestDatabase, settings: Settings) {
  const adminToken = randomBytes(24).toString('hex');
  for (let attempt = 1; ; attempt++) {
    log(`starting the service (attempt ${attempt})`);
    const service = await startService(db, adminToken, settings);
    try {
      // The many-merchants set and one more merchant for the hot wallet alone.
      const merchants = await provision(service, adminToken, settings.merchants + 1);
      return { service, many: merchants.slice(0, settings.merchants), hot: merchants[settings.merchants] };
    } catch (error) {
      await service.child.stop();
      if (!(error instanceof RouteMissing) || attempt >= BACK_OFFICE_ATTEMPTS) throw error;
      log(`back office not there yet (${error.message.split('\n')[0]}); retrying in ${BACK_OFFICE_RETRY_DELAY_MS / 1000} s`);
      await sleep(BACK_OFFICE_RETRY_DELAY_MS);
    }
  }
}

// ---------------------------------------------------------------- scenarios

let runCounter = 0;

/** Warm-up (discarded), then the measured run, against one server. */
async function scenario(
  name: string,
  server: Child,
  database: string,
  baseUrl: string,
  merchants: readonly Credentials[],
  settings: Settings,
  around: { before?: () => Promise<void>; after?: (result: LoadResult) => Promise<void> } = {},
): Promise<ScenarioResult> {
  const tag = () => `b${process.pid}-${Date.now().toString(36)}-${++runCounter}`;
  const load = { baseUrl, concurrency: settings.concurrency, merchants, skuId: SKU_ID };
  if (settings.warmupS > 0) {
    log(`${name}: warm-up ${settings.warmupS} s`);
    await runLoad({ ...load, durationMs: settings.warmupS * 1000, tag: tag() });
  }
  log(`${name}: measuring ${settings.requests !== undefined ? `${settings.requests} requests` : `${settings.durationS} s`}`);
  await around.before?.();
  const cpuBefore = cpuSnapshot(server.process.pid!, database);
  const result = await runLoad({
    ...load,
    ...(settings.requests !== undefined ? { requests: settings.requests } : { durationMs: settings.durationS * 1000 }),
    tag: tag(),
  });
  const cpuAfter = cpuSnapshot(server.process.pid!, database);
  await around.after?.(result);
  log(`${name}: ${result.requests} requests, ${result.accepted} accepted in ${(result.elapsedMs / 1000).toFixed(1)} s`);
  if (server.hasExited()) throw new Error(`the ${server.name} ${await server.exited} during "${name}":\n${server.logTail()}`);
  const cores = cpuBefore && cpuAfter ? coresUsed(cpuBefore, cpuAfter, result.elapsedMs / 1000) : undefined;
  return { name, result, cores };
}

interface ProfileTaken {
  path: string;
  /** Every SQL statement the service sent while profiling, with how often. */
  statements: Array<[string, number]>;
}

/** Starts or stops the service's CPU profiler and statement count (child-preload.ts); stopping returns what was taken. */
function profiler(child: Child, command: 'start' | 'stop'): Promise<ProfileTaken | undefined> {
  if (command === 'start') {
    child.process.send({ benchProfiler: 'start' });
    return sleep(100).then(() => undefined);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(undefined), 30_000);
    const onMessage = (message: unknown) => {
      const m = message as { cpuProfile?: string; statements?: Array<[string, number]>; cpuProfileError?: string };
      if (m.cpuProfileError) log(`CPU profile failed: ${m.cpuProfileError}`);
      if (m.cpuProfile) done({ path: m.cpuProfile, statements: m.statements ?? [] });
      else if (m.cpuProfileError) done(undefined);
    };
    const done = (taken: ProfileTaken | undefined) => {
      clearTimeout(timer);
      child.process.off('message', onMessage);
      resolve(taken);
    };
    child.process.on('message', onMessage);
    child.process.send({ benchProfiler: 'stop' });
  });
}

function statementSummary(taken: ProfileTaken, accepted: number, top = 12): string {
  const total = taken.statements.reduce((n, [, count]) => n + count, 0);
  const perSubmit = accepted > 0 ? (total / accepted).toFixed(1) : 'n/a';
  return [
    `  SQL statements sent while profiling: ${total}, ${perSubmit} per accepted submit (fulfilment and projections included); the most frequent:`,
    ...[...taken.statements]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([text, count]) => `    ${(accepted > 0 ? (count / accepted).toFixed(2) : String(count)).padStart(6)}  ${text}`),
  ].join('\n');
}

// ---------------------------------------------------------------- report

const rate = (r: LoadResult) => (r.elapsedMs > 0 ? r.accepted / (r.elapsedMs / 1000) : 0);
const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);

function report(settings: Settings, results: ScenarioResult[], baseline: ScenarioResult, loadAtStart: number): string {
  const cpus = os.cpus();
  const rows = [...results, baseline].map(({ name, result }) => [
    name,
    String(result.requests),
    rate(result).toFixed(0),
    percentile(result.latenciesMs, 50).toFixed(1),
    percentile(result.latenciesMs, 99).toFixed(1),
    String(sum(result.failures)),
  ]);
  const header = ['scenario', 'requests', 'accepted/s', 'p50 ms', 'p99 ms', 'non-2xx'];
  const lines = [
    '',
    `Machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()}; Node ${process.version}; ` +
      `load average (1 min) before the run ${loadAtStart.toFixed(2)}`,
    `Settings: concurrency ${settings.concurrency}, ` +
      (settings.requests !== undefined ? `${settings.requests} requests` : `${settings.durationS} s`) +
      ` per scenario after a ${settings.warmupS} s warm-up, ${settings.merchants} merchants in "many merchants", ` +
      `event store ${process.env.EVENT_STORE ?? 'postgres'}, upstream simulator delay ${process.env.UPSTREAM_SIM_DELAY_MS ?? '200'} ms`,
    '',
    ...markdownTable(header, rows),
    '',
  ];
  const baseRate = rate(baseline.result);
  const baseP50 = percentile(baseline.result.latenciesMs, 50);
  for (const { name, result } of results) {
    const ratio = baseRate > 0 ? (rate(result) / baseRate).toFixed(3) : 'n/a';
    const slower = baseP50 > 0 ? (percentile(result.latenciesMs, 50) / baseP50).toFixed(1) : 'n/a';
    lines.push(`service/baseline, ${name}: ${ratio} of the baseline's accepted/s (p50 ${slower}x the baseline's)`);
  }
  lines.push('');
  const all = [...results, baseline];
  if (all.every((r) => r.cores)) {
    const cpuHeader = ['scenario', 'server', 'postgres', 'load generator', 'other', 'whole machine', 'server+postgres ms/accepted'];
    const cpuRows = all.map(({ name, result, cores }) => {
      const c = cores!;
      const perAccepted = result.accepted > 0 ? (((c.server + c.postgres) * (result.elapsedMs / 1000) * 1000) / result.accepted).toFixed(2) : 'n/a';
      const other = Math.max(0, c.machine - c.server - c.postgres - c.bench);
      return [name, c.server.toFixed(2), c.postgres.toFixed(2), c.bench.toFixed(2), other.toFixed(2), c.machine.toFixed(2), perAccepted];
    });
    lines.push(
      `CPU during the measured runs, in cores (of ${cpus.length}): "server" is the service or the baseline server, "postgres" the local ` +
        `server's work for the benchmark's database, "other" everything else on the machine (Linux /proc):`,
      '',
      ...markdownTable(cpuHeader, cpuRows),
      '',
    );
  }
  for (const { name, result } of [...results, baseline]) {
    if (result.failures.size > 0) {
      const detail = [...result.failures].map(([status, n]) => `${status} x${n}${result.samples.has(status) ? ` ${result.samples.get(status)}` : ''}`);
      lines.push(`non-2xx in ${name}: ${detail.join('; ')}`);
    }
    if (result.otherSuccess.size > 0) {
      lines.push(`2xx other than 202 in ${name}: ${[...result.otherSuccess].map(([s, n]) => `${s} x${n}`).join(', ')}`);
    }
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2), process.env);
  const loadAtStart = os.loadavg()[0];
  log(`creating a database`);
  const db = await createTestDatabase('topup_bench');
  onCleanUp(`drop the database ${db.name}`, async () => {
    await db.drop();
    log(`dropped the database ${db.name}`);
  });
  log(`database ${db.name}`);

  const { service, many, hot } = await startProvisionedService(db, settings);
  log(`service up at ${service.url}, ${many.length + 1} merchants provisioned`);

  const profiles: Array<{ name: string; taken: ProfileTaken; accepted: number }> = [];
  const profiled = (name: string) =>
    settings.cpuProfDir
      ? {
          before: async () => void (await profiler(service.child, 'start')),
          after: async (result: LoadResult) => {
            const taken = await profiler(service.child, 'stop');
            if (taken) profiles.push({ name, taken, accepted: result.accepted });
          },
        }
      : {};

  const results: ScenarioResult[] = [];
  await waitUntilIdle(service.child.process.pid!);
  results.push(await scenario('many merchants', service.child, db.name, service.url, many, settings, profiled('many merchants')));
  log('waiting for the service to work off the orders of that run');
  const settled = await waitUntilIdle(service.child.process.pid!, SETTLE_MAX_MS);
  const settledNote =
    `After "many merchants" the service ${settled.idle ? 'went idle' : 'was still busy'} ${(settled.waitedMs / 1000).toFixed(0)} s after the last reply ` +
    `(fulfilment, projections and callbacks of the accepted orders), before "hot wallet" started.`;
  log(settledNote);
  results.push(await scenario('hot wallet', service.child, db.name, service.url, [hot], settings, profiled('hot wallet')));
  await service.child.stop();

  const baselineKey = `ak_${randomBytes(16).toString('hex')}`;
  const baselineSecret = randomBytes(32).toString('hex');
  const baseline = startNodeChild('baseline', 'test/bench/baseline-server.ts', {
    ...process.env,
    PORT: '0',
    BASELINE_API_KEY: baselineKey,
    BASELINE_APP_SECRET: baselineSecret,
  });
  onCleanUp('stop the baseline server', () => baseline.stop());
  let baselinePort: string;
  try {
    baselinePort = (await baseline.waitForLine(/^BASELINE_LISTENING (\d+)$/, 60_000))[1];
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nbaseline output:\n${baseline.logTail()}`);
  }
  const baselineResult = await scenario('baseline (node:http + HMAC)', baseline, db.name, `http://127.0.0.1:${baselinePort}`, [{ apiKey: baselineKey, appSecret: baselineSecret }], settings);
  await baseline.stop();

  console.log(report(settings, results, baselineResult, loadAtStart));
  console.log(settledNote);
  for (const { name, taken, accepted } of profiles) {
    console.log(`\n${name}: ${summariseProfile(taken.path)}\n${statementSummary(taken, accepted)}`);
  }
}

main().then(
  () => cleanUp().then(() => process.exit(interrupted ? 130 : 0)),
  (error) => {
    // After Ctrl-C the run fails in whatever it was doing; that is not news.
    if (!interrupted) log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return cleanUp().then(() => process.exit(interrupted ? 130 : 1));
  },
);
