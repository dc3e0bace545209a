import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { PoolConfig } from 'pg';
import { Minor, parseAmount } from '../shared/money';
import { connectionConfig } from './database-connection';

/** Every setting of the service, read once from the environment at start-up. */
/** pino's levels, least severe first; `silent` writes nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export interface AppConfig {
  readonly production: boolean;
  readonly port: number;
  /** Postgres for read models, and for events when eventStore is "postgres": DATABASE_URL, else PG* variables, else local defaults. */
  readonly database: PoolConfig;
  /** How long work that needs the database waits for it to answer again before it fails; 0 fails at once. A Patroni failover after a lost primary takes a few seconds, a switchover less. */
  readonly databaseWaitMs: number;
  /** How long the service's pooled connections stay open with nothing to do; 0 keeps them open. A new connection plans its statements again. */
  readonly databasePoolIdleMs: number;
  readonly eventStore: 'postgres' | 'esdb';
  readonly eventStoreConnectionString?: string;
  /** Before every stream name in EventStoreDB: a ledger sharing the server sees only its own streams. */
  readonly eventStoreStreamPrefix: string;
  readonly eventStorePollIntervalMs: number;
  /** Apply the projections on a thread of their own (PROJECTION_THREAD), not on the one that serves requests. */
  readonly projectionThread: boolean;
  readonly adminToken: string;
  /** Exactly one of these two: the real upstream, or the built-in simulator (which delivers nothing). */
  readonly upstreamUrl?: string;
  readonly upstreamSimulator: boolean;
  readonly upstreamSimDelayMs: number;
  /** How long the built-in simulator takes to refuse a top-up. */
  readonly upstreamSimFailureDelayMs: number;
  /** From sending a top-up to the end of the upstream's reply; after it the result is unknown. */
  readonly upstreamTimeoutMs: number;
  readonly upstreamConnectTimeoutMs: number;
  readonly fulfilmentConcurrency: number;
  /** Sends that provably never reached the upstream, before the order fails with UPSTREAM_UNAVAILABLE. */
  readonly fulfilmentMaxAttempts: number;
  readonly fulfilmentRetryBaseMs: number;
  /** Re-queries of a bulk re-query job in flight at the upstream at once, across every instance; 0: this instance runs none. */
  readonly requeryConcurrency: number;
  /** The backlog policy (merchant-api/gateway/intake-guard.ts): orders due and waiting for a worker, and seconds the oldest has waited; 0 is no limit. */
  readonly intakeMaxWaiting: number;
  readonly intakeMaxWaitS: number;
  readonly callbackRetryDelaysMs: readonly number[];
  readonly callbackAllowPrivateNetworks: boolean;
  readonly callbackTimeoutMs: number;
  readonly callbackConcurrency: number;
  readonly callbackConcurrencyPerMerchant: number;
  readonly trustProxy: number;
  /** 32 bytes: encrypts merchants' app secrets at rest. */
  readonly secretsKey: Buffer;
  /** Earlier keys, only to open secrets sealed before a rotation (reseal-secrets moves them to secretsKey). */
  readonly secretsKeysPrevious: readonly Buffer[];
  readonly orderRecoveryIntervalMs: number;
  /** How often each instance writes its row in service_instances (the status page's instances). */
  readonly instanceHeartbeatMs: number;
  /** How often the read models' in-flight tables are vacuumed (projections/in-flight-vacuum.ts); 0 leaves them to autovacuum. */
  readonly inFlightVacuumIntervalMs: number;
  readonly orderRecoveryGraceMs: number;
  /** Wallets loaded before the instance reports ready: the longest of those written in the last week. */
  readonly walletWarmup: number;
  /** The longest the instance stays unready for them; the rest load on in the background. */
  readonly walletWarmupMaxMs: number;
  /** From a request's first byte to the end of its headers. */
  readonly httpHeadersTimeoutMs: number;
  /** From a request's first byte to the end of its body; the reply's own time is not counted. */
  readonly httpRequestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open: longer than a load balancer's idle timeout. */
  readonly httpKeepAliveTimeoutMs: number;
  /** The address the HTTP server binds: 0.0.0.0 (every IPv4 interface) by default. */
  readonly host: string;
  /** json: one JSON object per line; pretty: one readable line per event, coloured only on a terminal. */
  readonly logFormat: 'json' | 'pretty';
  /** The least severe level written; Nest's start-up wiring (its route mapping) is at debug. */
  readonly logLevel: LogLevelName;
  /** Bearer token that /metrics requires, when set. */
  readonly metricsToken?: string;
  /** When set, /metrics is served on this port only, not on the API's port. */
  readonly metricsPort?: number;
  /** /health/ready fails while a projection is further behind the log than this. */
  readonly readyMaxLagMs: number;
  /**
   * The four-eyes rule (APPROVAL_THRESHOLD): a manual movement of money
   * greater than this, in the wallet's own currency, waits for a second
   * person's approval. Undefined: no approvals; 0n: every movement.
   */
  readonly approvalThreshold?: Minor;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const DEFAULT_CALLBACK_DELAYS = '30s,2m,10m,30m,2h';
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** Empty, or names EventStoreDB accepts that no system stream ($...) could be taken for. */
const STREAM_PREFIX = /^(?:[!-#%-~][!-~]{0,99})?$/;

/**
 * Validates the whole environment at once, so one start-up names every bad
 * variable. Development gets working defaults; production must be explicit
 * about its secrets.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): { config: AppConfig; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const production = env.NODE_ENV === 'production';
  const read = <T>(name: string, fallback: string, parse: (raw: string) => T | undefined, expected: string): T => {
    const raw = env[name] === undefined || env[name] === '' ? fallback : env[name]!;
    const value = parse(raw);
    if (value === undefined) problems.push(`${name} must be ${expected} (got ${JSON.stringify(raw)})`);
    return value as T;
  };

  const port = read('PORT', '8080', integerIn(0, 65535), 'an integer port from 0 to 65535');
  const databaseUrl = optionalUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], problems);
  const eventStore = read('EVENT_STORE', 'postgres', oneOf(['postgres', 'esdb'] as const), '"postgres" or "esdb"');
  const eventStoreConnectionString = optionalUrl(env, 'EVENTSTORE_CONNECTION_STRING', ['esdb:', 'esdb+discover:'], problems);
  if (eventStore === 'esdb' && !env.EVENTSTORE_CONNECTION_STRING) {
    problems.push('EVENTSTORE_CONNECTION_STRING is required when EVENT_STORE=esdb (e.g. esdb://localhost:2113?tls=false)');
  }
  const eventStoreStreamPrefix = env.EVENTSTORE_STREAM_PREFIX ?? '';
  if (eventStoreStreamPrefix && eventStore !== 'esdb')
    problems.push('EVENTSTORE_STREAM_PREFIX applies to EventStoreDB only: set it with EVENT_STORE=esdb, or not at all');
  if (!STREAM_PREFIX.test(eventStoreStreamPrefix)) {
    problems.push(`EVENTSTORE_STREAM_PREFIX must be up to 100 visible ASCII characters, not starting with $ (got ${JSON.stringify(eventStoreStreamPrefix)})`);
  }
  const upstreamUrl = optionalUrl(env, 'UPSTREAM_URL', ['http:', 'https:'], problems);
  const upstreamSimulator = upstreamChoice(env, production, problems, warnings);
  if (!databaseUrl && env.PGPORT && integerIn(1, 65535)(env.PGPORT) === undefined) {
    problems.push(`PGPORT must be an integer port from 1 to 65535 (got ${JSON.stringify(env.PGPORT)})`);
  }

  let adminToken = env.ADMIN_TOKEN ?? '';
  if (adminToken === '') {
    if (production) problems.push('ADMIN_TOKEN is required when NODE_ENV=production');
    adminToken = randomBytes(24).toString('base64url');
    warnings.push(`ADMIN_TOKEN is not set: generated ${adminToken} for this run only`);
  } else if (adminToken.length < 16) {
    problems.push('ADMIN_TOKEN must be at least 16 characters');
  }

  let secretsKey: Buffer;
  if (!env.SECRETS_KEY) {
    if (production) problems.push('SECRETS_KEY is required when NODE_ENV=production (64 hex characters: openssl rand -hex 32)');
    secretsKey = randomBytes(32);
    warnings.push(
      `SECRETS_KEY is not set: generated ${secretsKey.toString('hex')} for this run; merchant secrets stored with it are unreadable under any other key`,
    );
  } else if (HEX_KEY.test(env.SECRETS_KEY)) {
    secretsKey = Buffer.from(env.SECRETS_KEY, 'hex');
  } else {
    problems.push('SECRETS_KEY must be 32 bytes as 64 hex characters (openssl rand -hex 32)');
    secretsKey = Buffer.alloc(32);
  }
  const secretsKeysPrevious = read('SECRETS_KEY_PREVIOUS', '', keyList, 'a comma-separated list of keys, each 32 bytes as 64 hex characters');

  const config: AppConfig = {
    production,
    port,
    database: connectionConfig(databaseUrl, env),
    databaseWaitMs: read('DATABASE_WAIT_MS', '10000', integerIn(0, 300_000), 'an integer of milliseconds from 0 to 300000'),
    databasePoolIdleMs: read('DATABASE_POOL_IDLE_MS', '600000', integerIn(0, 86_400_000), 'an integer of milliseconds from 0 to 86400000'),
    eventStore,
    eventStoreConnectionString,
    eventStoreStreamPrefix,
    eventStorePollIntervalMs: read('EVENT_STORE_POLL_MS', '1000', integerIn(10, 60_000), 'an integer from 10 to 60000'),
    projectionThread: read('PROJECTION_THREAD', 'true', boolean, '"true" or "false"'),
    adminToken,
    upstreamUrl,
    upstreamSimulator,
    upstreamSimDelayMs: read('UPSTREAM_SIM_DELAY_MS', '200', integerIn(0, 600_000), 'an integer of milliseconds'),
    upstreamSimFailureDelayMs: read('UPSTREAM_SIM_FAILURE_DELAY_MS', '0', integerIn(0, 600_000), 'an integer of milliseconds'),
    upstreamTimeoutMs: read('UPSTREAM_TIMEOUT_MS', '10000', integerIn(50, 600_000), 'an integer of milliseconds from 50 to 600000'),
    upstreamConnectTimeoutMs: read('UPSTREAM_CONNECT_TIMEOUT_MS', '3000', integerIn(50, 60_000), 'an integer of milliseconds from 50 to 60000'),
    fulfilmentConcurrency: read('FULFILMENT_CONCURRENCY', '256', integerIn(0, 10_000), 'an integer from 0 (off) to 10000'),
    fulfilmentMaxAttempts: read('FULFILMENT_MAX_ATTEMPTS', '10', integerIn(1, 1000), 'an integer from 1 to 1000'),
    fulfilmentRetryBaseMs: read('FULFILMENT_RETRY_BASE_MS', '1000', integerIn(1, 3_600_000), 'an integer of milliseconds'),
    requeryConcurrency: read('REQUERY_CONCURRENCY', '8', integerIn(0, 1000), 'an integer from 0 (off) to 1000'),
    intakeMaxWaiting: read('INTAKE_MAX_WAITING', '20000', integerIn(0, 10_000_000), 'an integer from 0 (no limit) to 10000000'),
    intakeMaxWaitS: read('INTAKE_MAX_WAIT_S', '30', integerIn(0, 86_400), 'an integer of seconds from 0 (no limit) to 86400'),
    callbackRetryDelaysMs: read(
      'CALLBACK_RETRY_DELAYS',
      DEFAULT_CALLBACK_DELAYS,
      durationList,
      'a comma-separated list of durations like 100ms,30s,2m,1h, each at most 24h',
    ),
    callbackAllowPrivateNetworks: read('CALLBACK_ALLOW_PRIVATE_NETWORKS', 'false', boolean, '"true" or "false"'),
    callbackTimeoutMs: read('CALLBACK_TIMEOUT_MS', '10000', integerIn(50, 600_000), 'an integer of milliseconds from 50 to 600000'),
    callbackConcurrency: read('CALLBACK_CONCURRENCY', '256', integerIn(0, 10_000), 'an integer from 0 (off) to 10000'),
    callbackConcurrencyPerMerchant: read('CALLBACK_CONCURRENCY_PER_MERCHANT', '8', integerIn(1, 1000), 'an integer from 1 to 1000'),
    trustProxy: read('TRUST_PROXY', '0', integerIn(0, 10), 'a hop count from 0 to 10'),
    secretsKey,
    secretsKeysPrevious,
    orderRecoveryIntervalMs: read('ORDER_RECOVERY_INTERVAL_MS', '10000', integerIn(50, 3_600_000), 'an integer of milliseconds'),
    instanceHeartbeatMs: read('INSTANCE_HEARTBEAT_MS', '10000', integerIn(100, 600_000), 'an integer of milliseconds from 100 to 600000'),
    inFlightVacuumIntervalMs: read('IN_FLIGHT_VACUUM_INTERVAL_MS', '3000', integerIn(0, 600_000), 'an integer of milliseconds from 0 (off) to 600000'),
    orderRecoveryGraceMs: read('ORDER_RECOVERY_GRACE_MS', '5000', integerIn(0, 3_600_000), 'an integer of milliseconds'),
    walletWarmup: read('WALLET_WARMUP', '100', integerIn(0, 10_000), 'an integer from 0 (off) to 10000'),
    walletWarmupMaxMs: read('WALLET_WARMUP_MAX_MS', '60000', integerIn(0, 3_600_000), 'an integer of milliseconds from 0 to 3600000'),
    httpHeadersTimeoutMs: read('HTTP_HEADERS_TIMEOUT_MS', '10000', integerIn(100, 600_000), 'an integer of milliseconds from 100 to 600000'),
    httpRequestTimeoutMs: read('HTTP_REQUEST_TIMEOUT_MS', '30000', integerIn(100, 600_000), 'an integer of milliseconds from 100 to 600000'),
    httpKeepAliveTimeoutMs: read('HTTP_KEEP_ALIVE_TIMEOUT_MS', '65000', integerIn(100, 3_600_000), 'an integer of milliseconds from 100 to 3600000'),
    approvalThreshold: env.APPROVAL_THRESHOLD
      ? read('APPROVAL_THRESHOLD', '', parseAmount, 'an amount with at most two decimals, e.g. 100.00, or 0 for every movement (unset: no approvals)')
      : undefined,
    ...observabilityConfig(env, production, read, problems),
  };
  // The request timeout covers the headers too, so a longer headers timeout could never fire.
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    problems.push(`HTTP_HEADERS_TIMEOUT_MS (${config.httpHeadersTimeoutMs}) must not be longer than HTTP_REQUEST_TIMEOUT_MS (${config.httpRequestTimeoutMs})`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config, warnings };
}

type Read = <T>(name: string, fallback: string, parse: (raw: string) => T | undefined, expected: string) => T;

/** Where the service listens and how it can be watched: logs, metrics, readiness. */
function observabilityConfig(env: NodeJS.ProcessEnv, production: boolean, read: Read, problems: string[]) {
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    problems.push('METRICS_TOKEN must be 16-256 printable ASCII characters without spaces (openssl rand -hex 16)');
  }
  const metricsPort = env.METRICS_PORT ? read('METRICS_PORT', '', integerIn(0, 65535), 'an integer port from 0 to 65535') : undefined;
  return {
    host: read('HOST', '0.0.0.0', hostAddress, 'an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or ::'),
    logFormat: read('LOG_FORMAT', production ? 'json' : 'pretty', oneOf(['json', 'pretty'] as const), '"json" or "pretty"'),
    logLevel: read('LOG_LEVEL', 'info', oneOf(LOG_LEVELS), LOG_LEVELS.map((level) => `"${level}"`).join(', ')),
    metricsToken,
    metricsPort,
    readyMaxLagMs: read('READY_MAX_LAG_MS', '30000', integerIn(100, 86_400_000), 'an integer of milliseconds from 100 to 86400000'),
  };
}

function hostAddress(raw: string): string | undefined {
  return isIP(raw) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(raw) ? raw : undefined;
}

/**
 * Whether to run the built-in simulator. It marks orders delivered without
 * any provider, so production runs it only when asked to, and says so loudly;
 * development runs it whenever UPSTREAM_URL is empty.
 */
function upstreamChoice(env: NodeJS.ProcessEnv, production: boolean, problems: string[], warnings: string[]): boolean {
  const raw = env.UPSTREAM_SIMULATOR ?? '';
  const asked = raw === '' ? undefined : boolean(raw);
  if (raw !== '' && asked === undefined) {
    problems.push(`UPSTREAM_SIMULATOR must be "true" or "false" (got ${JSON.stringify(raw)})`);
    return false;
  }
  const hasUrl = Boolean(env.UPSTREAM_URL);
  if (asked === true && hasUrl) {
    problems.push('UPSTREAM_SIMULATOR=true and UPSTREAM_URL are both set: set UPSTREAM_URL for the real upstream, or UPSTREAM_SIMULATOR=true alone');
    return false;
  }
  if (hasUrl) return false;
  if (asked === false) {
    problems.push('UPSTREAM_URL is required when UPSTREAM_SIMULATOR=false');
    return false;
  }
  if (production && asked === undefined) {
    problems.push(
      'UPSTREAM_URL is required when NODE_ENV=production: without it the built-in simulator would mark orders delivered that nobody delivers ' +
        '(set UPSTREAM_SIMULATOR=true to run it anyway, e.g. for a demonstration)',
    );
    return false;
  }
  if (production) {
    warnings.push(
      'UPSTREAM_SIMULATOR=true with NODE_ENV=production: orders are NOT really delivered; the built-in upstream simulator answers for a provider that does not exist',
    );
  }
  return true;
}

function integerIn(min: number, max: number) {
  return (raw: string) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined);
}

function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string) => (values.includes(raw as T) ? (raw as T) : undefined);
}

function boolean(raw: string): boolean | undefined {
  return raw === 'true' ? true : raw === 'false' ? false : undefined;
}

/** "" (none) or "k1,k2": each 64 hex characters. */
function keyList(raw: string): Buffer[] | undefined {
  if (raw === '') return [];
  const keys = raw.split(',').map((k) => k.trim());
  return keys.every((k) => HEX_KEY.test(k)) ? keys.map((k) => Buffer.from(k, 'hex')) : undefined;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** A day: longer waits belong in a schedule, not a timer. */
const MAX_DELAY_MS = 86_400_000;

/** "100ms,30s,2m,1h" -> milliseconds. */
export function durationList(raw: string): number[] | undefined {
  const parts = raw.split(',').map((p) => p.trim());
  const values = parts.map((p) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(p);
    return match ? Number(match[1]) * UNITS[match[2]] : NaN;
  });
  return values.length > 0 && values.every((v) => Number.isSafeInteger(v) && v <= MAX_DELAY_MS) ? values : undefined;
}

function optionalUrl(env: NodeJS.ProcessEnv, name: string, protocols: string[], problems: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    if (protocols.includes(new URL(raw).protocol)) return raw;
  } catch {
    // reported below
  }
  problems.push(`${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  return undefined;
}
