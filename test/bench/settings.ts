import os from 'node:os';
import { join } from 'node:path';

export const SYSTEMS = ['service', 'crud', 'bare'] as const;
export type SystemName = (typeof SYSTEMS)[number];

export interface Settings {
  concurrency: number;
  durationS: number;
  requests?: number;
  warmupS: number;
  merchants: number;
  passes: number;
  systems: SystemName[];
  /** The open-loop rate as a fraction of the same system's closed-loop maximum. */
  steadyFraction: number;
  /** Seconds of steady load in the end-to-end phase; 0 leaves the phase out. */
  endToEndS: number;
  /** The end-to-end phase's offered rate (orders/s) instead of steadyFraction of the service's spread rate. */
  endToEndRate?: number;
  /** Seconds of load at the end-to-end rate before its measured load, on the same database. */
  endToEndWarmupS: number;
  /** Seconds of closed-loop load per system and pass in the whole-life phase (service against the whole-life peer); 0 leaves it out. */
  wholeLifeS: number;
  /** The longest wait for the end-to-end backlog after the load stops. */
  drainMaxS: number;
  /** Fulfilment on in the service during the submit scenarios (it is always on in the end-to-end phase). */
  withFulfilment: boolean;
  cpuProfDir?: string;
}

const OPTIONS = [
  'concurrency',
  'duration',
  'requests',
  'warmup',
  'merchants',
  'passes',
  'systems',
  'steady',
  'e2e',
  'e2e-rate',
  'e2e-warmup',
  'whole-life',
  'drain-max',
  'with-fulfilment',
  'cpu-prof',
] as const;
/** Options that may stand alone, without a value. */
const FLAGS = new Set(['cpu-prof', 'with-fulfilment']);

export function readSettings(argv: string[], env: NodeJS.ProcessEnv): Settings {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(usage());
      process.exit(0);
    }
    const match = arg.match(/^--([a-z0-9-]+)(?:=(.*))?$/);
    if (!match) throw new Error(`unexpected argument ${arg}\n${usage()}`);
    const [, name, inline] = match;
    if (inline !== undefined) args.set(name, inline);
    else if (FLAGS.has(name) && (argv[i + 1] === undefined || argv[i + 1].startsWith('--'))) args.set(name, '');
    else args.set(name, argv[++i] ?? '');
  }
  for (const name of args.keys()) if (!(OPTIONS as readonly string[]).includes(name)) throw new Error(`unknown option --${name}\n${usage()}`);

  const number = (name: string, variable: string, fallback: number | undefined, min: number, max = Infinity): number | undefined => {
    const raw = args.get(name) ?? env[variable];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} / ${variable} must be a number from ${min} to ${max}, got ${raw}`);
    return value;
  };
  const integer = (name: string, variable: string, fallback: number | undefined, min: number) => {
    const value = number(name, variable, fallback, min);
    if (value !== undefined && !Number.isInteger(value)) throw new Error(`--${name} / ${variable} must be an integer, got ${value}`);
    return value;
  };
  const flag = (name: string, variable: string) => {
    const raw = args.has(name) ? args.get(name) : env[variable];
    return raw !== undefined && raw !== '0' && raw !== 'false';
  };
  const systems = (args.get('systems') ?? env.BENCH_SYSTEMS ?? SYSTEMS.join(',')).split(',').map((s) => s.trim());
  for (const s of systems)
    if (!(SYSTEMS as readonly string[]).includes(s)) throw new Error(`--systems / BENCH_SYSTEMS: unknown system ${s}; known: ${SYSTEMS.join(', ')}`);
  const cpuProf = args.has('cpu-prof') ? args.get('cpu-prof') : env.BENCH_CPU_PROF;
  return {
    concurrency: integer('concurrency', 'CONCURRENCY', 32, 1)!,
    durationS: number('duration', 'DURATION_S', 5, 0.1)!,
    requests: integer('requests', 'REQUESTS', undefined, 1),
    warmupS: number('warmup', 'WARMUP_S', 2, 0)!,
    merchants: integer('merchants', 'MERCHANTS', 50, 1)!,
    passes: integer('passes', 'PASSES', 2, 1)!,
    systems: SYSTEMS.filter((s) => systems.includes(s)),
    steadyFraction: number('steady', 'STEADY_FRACTION', 0.7, 0.01, 10)!,
    endToEndS: number('e2e', 'E2E_S', 10, 0)!,
    endToEndRate: number('e2e-rate', 'E2E_RATE', undefined, 1),
    // The service of the end-to-end phase is a new process: after 1 s of load
    // V8's optimising compiler still took 17-19 % of its CPU in the measured
    // window, after 5 s 4-5 %. A steady load meets a warm service.
    endToEndWarmupS: number('e2e-warmup', 'E2E_WARMUP_S', 5, 0)!,
    wholeLifeS: number('whole-life', 'WHOLE_LIFE_S', 15, 0)!,
    drainMaxS: number('drain-max', 'DRAIN_MAX_S', 60, 1)!,
    withFulfilment: flag('with-fulfilment', 'BENCH_WITH_FULFILMENT'),
    cpuProfDir:
      cpuProf === undefined || cpuProf === '0' || cpuProf === 'false'
        ? undefined
        : cpuProf === '' || cpuProf === '1' || cpuProf === 'true'
          ? join(os.tmpdir(), `topup-bench-profiles-${process.pid}`)
          : cpuProf,
  };
}

export function usage(): string {
  return [
    'usage: npm run bench [-- --concurrency N] [--duration S | --requests N] [--warmup S] [--merchants N] [--passes N]',
    '                        [--systems service,crud,bare] [--steady F] [--e2e S] [--e2e-rate R] [--e2e-warmup S] [--whole-life S] [--drain-max S] [--with-fulfilment] [--cpu-prof [DIR]]',
    'or the variables CONCURRENCY, DURATION_S, REQUESTS, WARMUP_S, MERCHANTS, PASSES, BENCH_SYSTEMS, STEADY_FRACTION, E2E_S, E2E_RATE,',
    'E2E_WARMUP_S, WHOLE_LIFE_S, DRAIN_MAX_S, BENCH_WITH_FULFILMENT, BENCH_CPU_PROF. See the header of test/bench/submit-bench.ts.',
  ].join('\n');
}

/**
 * A positive number (or zero, where `zero` says it means "off") from
 * `--name=value` or the environment variable, for the benchmark's smaller
 * scripts (bench:writes, bench:soak).
 */
export function numberOption(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  name: string,
  variable: string,
  fallback: number,
  { zero = false }: { zero?: boolean } = {},
): number {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  const raw = arg?.slice(name.length + 3) ?? env[variable];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zero)) {
    throw new Error(`--${name} / ${variable} must be a ${zero ? 'number, 0 or more' : 'positive number'}, got ${raw}`);
  }
  return value;
}
