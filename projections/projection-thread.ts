/**
 * The projections' own thread (see ThreadedProjectionRunner): an
 * InProcessProjectionRunner over a pool and an event store of its own,
 * reporting each batch and each log line to the thread that started it.
 */
import { LoggerService } from '@nestjs/common';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createEventStore, EventStoreConfig } from '../src/infrastructure/event-store/create-event-store';
import { logFailure } from '../src/infrastructure/logging/log-failure';
import { createPool } from '../src/infrastructure/postgres/connection';
import { GlobalPosition } from '../src/ledger/ports/event-store.port';
import { fedProjections } from './all-projections';
import { InProcessProjectionRunner } from './projection-runner';

/** The event store's settings and how long the thread's pooled connections stay open unused (node-postgres's 10 s when not given). */
export type ProjectionThreadConfig = EventStoreConfig & { databasePoolIdleMs?: number };

export interface ProjectionThreadData {
  config: ProjectionThreadConfig;
  /** The projections to run, by name, out of fedProjections. */
  projections: readonly string[];
}

export type ThreadError = { message: string; stack?: string; code?: string };

/** What the thread tells its starter. */
export type ProjectionThreadMessage =
  | { kind: 'started'; reached: [string, GlobalPosition][] }
  | { kind: 'applied'; reached: [string, GlobalPosition][]; count: number; types: string[] }
  | { kind: 'log'; level: 'log' | 'warn' | 'error'; message: string; trace?: string }
  | { kind: 'failed'; error: ThreadError }
  | { kind: 'stopped' };

/** What its starter tells the thread. */
export type ProjectionThreadCommand = { kind: 'stop' };

/** One connection applies the batches; the others read the log and lock the checkpoints at start. */
const POOL_SIZE = 4;
/** How the thread's connections show in pg_stat_activity. */
export const PROJECTION_THREAD_APPLICATION = 'topup-ledger projections';

function post(message: ProjectionThreadMessage): void {
  parentPort!.postMessage(message);
}

/** Log lines go to the starting thread's logger. */
const logger: LoggerService = {
  log: (message: string) => post({ kind: 'log', level: 'log', message }),
  warn: (message: string) => post({ kind: 'log', level: 'warn', message }),
  error: (message: string, trace?: string) => post({ kind: 'log', level: 'error', message, trace }),
};

async function run({ config, projections: names }: ProjectionThreadData): Promise<void> {
  const projections = names.map((name) => {
    const projection = fedProjections.find((p) => p.name === name);
    if (!projection) throw new Error(`no projection named ${name}`);
    return projection;
  });
  const pool = createPool(config.database, { max: POOL_SIZE, applicationName: PROJECTION_THREAD_APPLICATION, idleMs: config.databasePoolIdleMs });
  const store = await createEventStore(config, pool);
  const runner = new InProcessProjectionRunner(pool, store, projections, (message, error) => logFailure(logger, message, error));
  const reached = (): [string, GlobalPosition][] => names.map((name) => [name, runner.position(name)]);
  const close = async () => {
    await runner.stop();
    await store.close();
    await pool.end();
  };
  // The starter ends the thread when it hears 'stopped' or 'failed'.
  parentPort!.on('message', (command: ProjectionThreadCommand) => {
    if (command.kind === 'stop') void close().finally(() => post({ kind: 'stopped' }));
  });
  runner.onApplied(({ count, types }) => post({ kind: 'applied', reached: reached(), count, types: [...types] }));
  try {
    await runner.start();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  post({ kind: 'started', reached: reached() });
}

// Imported on the main thread too, for its types and names: only a thread runs.
if (!isMainThread) {
  run(workerData as ProjectionThreadData).catch((error: unknown) => {
    const { message, stack, code } =
      error instanceof Error ? (error as Error & { code?: string }) : { message: String(error), stack: undefined, code: undefined };
    post({ kind: 'failed', error: { message, stack, code } });
  });
}
