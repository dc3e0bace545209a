import { INestApplication } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { bootstrap } from '../../src/main';
import { loadConfig } from '../../src/config/config';
import { comparePositions, EVENT_STORE, EventStore, GlobalPosition } from '../../src/ledger/ports/event-store.port';
import { PG_POOL } from '../../src/infrastructure/infrastructure.tokens';
import { OrderRecovery } from '../../src/ledger/process-manager/order-recovery';
import { ProjectionRunner } from '../../projections/projection-runner';
import { lastPosition } from './settled-log';
import { createTestDatabase, TestDatabase } from './test-database';

export interface RunningService {
  app: INestApplication;
  url: string;
  commands: CommandBus;
  pool: Pool;
  store: EventStore;
  projections: ProjectionRunner;
  recovery: OrderRecovery;
  /** Waits until every projection has applied everything in the log now. */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

export const TEST_ENV = {
  NODE_ENV: 'test',
  PORT: '0',
  ADMIN_TOKEN: 'test-admin-token-0123456789',
  SECRETS_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  EVENT_STORE_POLL_MS: '200',
  // Suites run many services on one server (max_connections 100 on CI's): a suite's connections are let go
  // 10 s after its load, not kept for its life. The suites of lost connections run with the default.
  DATABASE_POOL_IDLE_MS: '10000',
  // Tests drive the process manager themselves.
  ORDER_RECOVERY_INTERVAL_MS: '3600000',
  // Fulfilment suites turn the worker on; elsewhere orders stay where the test put them.
  FULFILMENT_CONCURRENCY: '0',
  // Callback suites turn the sender on.
  CALLBACK_CONCURRENCY: '0',
  // With fulfilment off, every accepted order waits: the backlog policy would refuse submits after 30 s of a suite.
  INTAKE_MAX_WAITING: '0',
  INTAKE_MAX_WAIT_S: '0',
};

/** Starts the real service (HTTP on a random port) on the given test database. */
export async function startService(db: Pick<TestDatabase, 'env'>, env: Record<string, string> = {}): Promise<RunningService> {
  const { config } = loadConfig({ ...TEST_ENV, ...db.env, ...env });
  const app = await bootstrap(config);
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const store = app.get<EventStore>(EVENT_STORE);
  const projections = app.get(ProjectionRunner);
  return {
    app,
    url,
    commands: app.get(CommandBus),
    pool: app.get<Pool>(PG_POOL),
    store,
    projections,
    recovery: app.get(OrderRecovery),
    async catchUp() {
      const head = await lastPosition(store);
      if (!(await projectionsReach(projections, head, 30000))) throw new Error('projections did not catch up within 30 s');
    },
    stop: () => app.close(),
  };
}

/** Whether every projection of this instance has applied the event at `position` within the time given. */
export async function projectionsReach(runner: ProjectionRunner, position: GlobalPosition, timeoutMs: number): Promise<boolean> {
  const reached = () => runner.projections.every((p) => comparePositions(runner.position(p.name), position) >= 0);
  for (const deadline = Date.now() + timeoutMs; !reached(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > deadline) return false;
  }
  return true;
}

/** A test database with the service running on it, for one suite. */
export async function serviceOnFreshDatabase(env: Record<string, string> = {}) {
  const db = await createTestDatabase();
  const service = await startService(db, env);
  return {
    db,
    service,
    async teardown() {
      await service.stop();
      await db.drop();
    },
  };
}
