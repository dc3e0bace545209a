import { LoggerService } from '@nestjs/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { logFailure } from '../src/infrastructure/logging/log-failure';
import { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import type { ProjectionThreadCommand, ProjectionThreadConfig, ProjectionThreadData, ProjectionThreadMessage, ThreadError } from './projection-thread';

/** The thread's entry: the .ts beside this file under ts-node and Jest, the .js in a build. */
const ENTRY = join(__dirname, `projection-thread${extname(__filename)}`);
/**
 * A TypeScript entry needs a loader in the thread: the process's own when it
 * was started with one (npm start's ts-node, the benchmark's register), else
 * ts-node's (Jest).
 */
const EXEC_ARGV =
  extname(__filename) === '.ts' && !process.execArgv.some((arg) => /ts-node|register/.test(arg))
    ? [...process.execArgv, '-r', 'ts-node/register/transpile-only']
    : undefined;

/** A thread that ends by surprise is started again after this, doubling while it keeps failing. */
const RESTART_MIN_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** How long a stop waits for the thread's batch under way and its connections to close. */
const STOP_TIMEOUT_MS = 15_000;

function errorFrom({ message, stack, code }: ThreadError): Error {
  const error = Object.assign(new Error(message), code === undefined ? {} : { code });
  if (stack) error.stack = stack;
  return error;
}

/**
 * Applies the projections on a worker thread, over connections of its own.
 * Reading the log back, decoding it, building each batch's statements and
 * applying them took about a third of a submit's CPU, and on the main
 * thread that work held up the requests behind it. This class keeps, from
 * the thread's reports, what the rest of the service asks of the
 * projections: positions, and a call after each batch. Appends in this
 * process wake the thread (ChangeNotifier's BroadcastChannel, at most every
 * 20 ms). A thread that ends by surprise is started again: a batch is
 * applied once whatever happens to a thread, as it is whatever happens to
 * an instance.
 */
export class ThreadedProjectionRunner extends ProjectionRunner {
  private worker?: Worker;
  private stopping = false;
  private restartTimer?: NodeJS.Timeout;
  private restartDelayMs = RESTART_MIN_MS;
  /** What each thread is started with: the event store's and the pool's settings only (the service's configuration holds secrets). */
  private readonly data: ProjectionThreadData;

  constructor(
    projections: readonly Projection[],
    { eventStore, eventStoreConnectionString, eventStoreStreamPrefix, database, eventStorePollIntervalMs, databasePoolIdleMs }: ProjectionThreadConfig,
    private readonly logger: LoggerService,
  ) {
    super(projections);
    this.data = {
      config: { eventStore, eventStoreConnectionString, eventStoreStreamPrefix, database, eventStorePollIntervalMs, databasePoolIdleMs },
      projections: projections.map((p) => p.name),
    };
  }

  /** Resolves once the thread has locked the checkpoints and subscribed; rejects with the thread's error. */
  start(): Promise<void> {
    this.stopping = false;
    return this.spawn();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'stop' } satisfies ProjectionThreadCommand);
    const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private spawn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const worker = new Worker(ENTRY, { workerData: this.data, execArgv: EXEC_ARGV });
      this.worker = worker;
      let started = false;
      let failure: Error | undefined;
      worker.on('message', (message: ProjectionThreadMessage) => {
        switch (message.kind) {
          case 'started':
            for (const [name, position] of message.reached) this.reach(name, position);
            started = true;
            this.restartDelayMs = RESTART_MIN_MS;
            this.logger.log(`applying ${this.projections.map((p) => p.name).join(', ')} on a thread of their own`);
            resolve();
            break;
          case 'applied':
            for (const [name, position] of message.reached) this.reach(name, position);
            this.applied({ count: message.count, types: new Set(message.types) });
            break;
          case 'log':
            if (message.level === 'error') this.logger.error(message.message, message.trace);
            else this.logger[message.level](message.message);
            break;
          case 'failed':
            failure = errorFrom(message.error);
            void worker.terminate();
            break;
          case 'stopped':
            void worker.terminate();
            break;
        }
      });
      worker.on('error', (error) => (failure = error));
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (!started) reject(failure ?? new Error(`the projections thread ended with code ${code} before it started`));
        else if (!this.stopping) this.restartLater(failure ?? new Error(`the projections thread ended with code ${code}`));
      });
    });
  }

  private restartLater(reason: Error): void {
    // A thread stopped while it was starting again ends here too.
    if (this.stopping) return;
    logFailure(this.logger, `the projections thread ended; starting it again in ${this.restartDelayMs} ms`, reason);
    this.restartTimer = setTimeout(() => {
      if (this.stopping) return;
      this.spawn().catch((error: Error) => this.restartLater(error));
    }, this.restartDelayMs);
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, RESTART_MAX_MS);
  }
}
