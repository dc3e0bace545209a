import type { Pool } from 'pg';
import { EventStore, START } from '../../ledger/ports/event-store.port';
import { isDatabaseUnavailable } from '../../infrastructure/postgres/database-wait';
import { isEventStoreUnavailable } from '../../infrastructure/event-store/store-unavailable';
import { Migration } from '../../infrastructure/postgres/migrations';
import { projectionLags } from '../projection-lag';
import { WalletWarmup } from '../../ledger/wallet/wallet-warmup';
import type { IntakeGuard } from '../../merchant-api';

/** A check that has not answered by then has failed: a probe must answer before its own timeout. */
const CHECK_TIMEOUT_MS = 2000;

export interface CheckResult {
  ok: boolean;
  ms: number;
  /** Why it failed, in words safe for an unauthenticated probe. */
  error?: string;
  /** The error itself, for the log only: a driver's message may name hosts, ports and users. */
  cause?: unknown;
  /** What it found: migrations missing, projections behind. */
  detail?: Record<string, unknown>;
}

export type ReadinessChecks = Record<'postgres' | 'event_store' | 'migrations' | 'projections' | 'wallets' | 'intake', CheckResult>;

/**
 * Whether this instance can serve: Postgres and the event store answer, every
 * migration it knows is applied, and every projection is within maxLagMs of
 * the log (orders and balances read from the read models would be stale),
 * and the wallets loaded at start-up are loaded (WALLET_WARMUP). The backlog
 * policy's state is shown (intake) but never makes an instance unready: every
 * instance shares the one queue, so taking one out of the balancer would only
 * move its merchants to others that refuse them too.
 */
export class Readiness {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly migrations: readonly Migration[],
    private readonly projections: readonly string[],
    private readonly maxLagMs: number,
    /** The wallets' start-up load: only its status is read. */
    private readonly warmup: Pick<WalletWarmup, 'status'>,
    private readonly intake?: Pick<IntakeGuard, 'status'>,
  ) {}

  async check(): Promise<{ ready: boolean; checks: ReadinessChecks }> {
    const [postgres, eventStore, migrations, projections, intake] = await Promise.all([
      timed(async () => {
        await this.pool.query('select 1');
      }),
      timed(async () => {
        await this.store.readAll(START, 1, { upToHorizon: true });
      }),
      timed(() => this.missingMigrations()),
      timed(() => this.projectionLag()),
      timed(() => this.intakeState()),
    ]);
    const checks: ReadinessChecks = { postgres, event_store: eventStore, migrations, projections, wallets: this.walletsLoaded(), intake };
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  private async intakeState(): Promise<Omit<CheckResult, 'ms'>> {
    if (!this.intake) return { ok: true };
    const { shedding, waiting, oldestWaitS, limits } = await this.intake.status();
    const detail = {
      shedding,
      waiting,
      oldest_wait_s: Math.round(oldestWaitS * 10) / 10,
      max_waiting: limits.maxWaiting,
      max_wait_s: limits.maxWaitS,
    };
    // The instance serves either way (a refused submit is an answer): the detail says whether submits are refused.
    return { ok: true, detail };
  }

  private async missingMigrations(): Promise<Omit<CheckResult, 'ms'>> {
    const { rows } = await this.pool.query<{ id: string }>('select id from schema_migrations');
    const applied = new Set(rows.map((r) => r.id));
    const missing = this.migrations.map((m) => m.id).filter((id) => !applied.has(id));
    return missing.length === 0
      ? { ok: true, detail: { applied: this.migrations.length } }
      : { ok: false, error: `${missing.length} migrations not applied`, detail: { missing } };
  }

  /** A failed load is no reason to stay out (each wallet then loads at its first command), nor one past WALLET_WARMUP_MAX_MS (the rest load on behind it). */
  private walletsLoaded(): CheckResult {
    const { ready, ...detail } = this.warmup.status;
    if (!ready) return { ok: false, ms: 0, error: 'wallets still loading (WALLET_WARMUP)', detail };
    return { ok: true, ms: 0, detail };
  }

  private async projectionLag(): Promise<Omit<CheckResult, 'ms'>> {
    const lags = await projectionLags(this.pool, this.store, this.projections, 1);
    const lagMs = Object.fromEntries(lags.map((l) => [l.projection, Math.round(l.seconds * 1000)]));
    const behind = lags.filter((l) => l.seconds * 1000 > this.maxLagMs).map((l) => l.projection);
    const detail = { max_lag_ms: this.maxLagMs, lag_ms: lagMs };
    return behind.length === 0 ? { ok: true, detail } : { ok: false, error: `${behind.join(', ')} more than ${this.maxLagMs} ms behind the log`, detail };
  }
}

async function timed(check: () => Promise<Omit<CheckResult, 'ms'> | void>): Promise<CheckResult> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    const result = (await Promise.race([check(), timeout])) ?? { ok: true };
    return { ...result, ms: Date.now() - started };
  } catch (error) {
    return { ok: false, ms: Date.now() - started, error: publicReason(error), cause: error };
  } finally {
    clearTimeout(timer);
  }
}

/** Why a check failed, without the driver's details (addresses, user names). */
function publicReason(error: unknown): string {
  if (isDatabaseUnavailable(error)) return 'the database does not answer';
  if (isEventStoreUnavailable(error)) return 'EventStoreDB does not answer (or has no leader)';
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return `the database refused the check (SQLSTATE ${code})`;
  if (typeof message === 'string' && message.startsWith('no answer within')) return message;
  return 'the check failed (the service log has the error)';
}
