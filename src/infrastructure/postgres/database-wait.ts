import { Pool, PoolClient, PoolConfig } from 'pg';

const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown: the backend was terminated
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: a write reached a demoted primary, now a replica
]);

/**
 * Whether an error means the database could not be reached or dropped the
 * connection, as opposed to a fault in what was asked of it. Such errors are
 * expected during a restart or failover and heal by themselves.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || /^E(CONNREFUSED|CONNRESET|PIPE|HOSTUNREACH|TIMEDOUT)$/.test(code)))
    return true;
  return (
    typeof message === 'string' &&
    /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)|is not currently accepting connections$/.test(
      message,
    )
  );
}

export interface WaitOptions {
  /** The longest wait after the first failure; 0 tries once. */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Told of each failure that is waited out, e.g. to count it. */
  onWait?: (error: unknown) => void;
  /** Which failures are waited out; by default a Postgres outage (isDatabaseUnavailable). */
  isOutage?: (error: unknown) => boolean;
}

const FIRST_DELAY_MS = 50;
const LONGEST_DELAY_MS = 1000;

/**
 * Runs `work` again while the database does not answer (a restart, a
 * failover), for at most `waitMs` after the first failure, backing off from
 * 50 ms to 1 s; then the last failure is thrown. Only for work that is safe
 * to run twice: a connection that was never made, a read, or a write whose
 * repetition the database recognises (an idempotency key, an expected
 * revision, an admission's own token). A failure that is not an outage is
 * thrown at once.
 */
export async function untilDatabaseAnswers<T>(work: () => Promise<T>, wait: WaitOptions): Promise<T> {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let giveUpAt: number | undefined;
  for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, LONGEST_DELAY_MS)) {
    try {
      return await work();
    } catch (error) {
      if (!(wait.isOutage ?? isDatabaseUnavailable)(error)) throw error;
      giveUpAt ??= now() + wait.waitMs;
      const left = giveUpAt - now();
      if (left <= 0) throw error;
      wait.onWait?.(error);
      await sleep(Math.min(delay, left));
    }
  }
}

/**
 * A pool whose checkouts wait for the database: while no server answers
 * (a failover in progress), `connect` and `query` keep trying for up to
 * `waitMs` instead of failing at once. Nothing was sent on a connection
 * that was never made, so this is safe for every statement; a statement
 * whose connection drops while it runs still fails (it may have committed).
 */
export class WaitingPool extends Pool {
  constructor(
    config: PoolConfig,
    private readonly wait: Pick<WaitOptions, 'waitMs' | 'onWait'>,
  ) {
    super(config);
  }

  /**
   * This pool for a caller that must see an outage at once rather than wait
   * it out (the readiness probe): the same connections, checked out without
   * waiting.
   */
  withoutWaiting(): Pool {
    const view = Object.create(this) as Pool;
    // pg's pool.query checks out through this.connect: on this view, the base class's, on the pool itself.
    Object.defineProperty(view, 'connect', { value: (...args: unknown[]) => (Pool.prototype.connect as (...a: unknown[]) => unknown).apply(this, args) });
    return view;
  }

  override connect(): Promise<PoolClient>;
  override connect(callback: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void): Promise<PoolClient> | void {
    // pg's own pool.query checks out through connect(callback), so queries wait too.
    const checkedOut = this.wait.waitMs > 0 && !this.ending ? untilDatabaseAnswers(() => super.connect(), this.wait) : super.connect();
    if (!callback) return checkedOut;
    checkedOut.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }
}

/** The pool as a caller sees it that must report an outage at once rather than wait it out (a probe, a scrape). */
export function withoutWaiting(pool: Pool): Pool {
  return pool instanceof WaitingPool ? pool.withoutWaiting() : pool;
}
