import { LoggerService } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { Client } from 'pg';
import { fedProjections } from '../../projections/all-projections';
import { PROJECTION_THREAD_APPLICATION } from '../../projections/projection-thread';
import { InProcessProjectionRunner } from '../../projections/projection-runner';
import { ThreadedProjectionRunner } from '../../projections/threaded-projection-runner';
import { quoteIdentifier } from '../../src/infrastructure/postgres/connection';
import { isDatabaseUnavailable } from '../../src/infrastructure/postgres/database-wait';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';

/** Log lines a runner's thread sent back, by level. */
function collectingLogger() {
  const lines: { level: string; message: string }[] = [];
  const logger: LoggerService = {
    log: (message: string) => lines.push({ level: 'log', message }),
    warn: (message: string) => lines.push({ level: 'warn', message }),
    error: (message: string) => lines.push({ level: 'error', message }),
  };
  return { lines, logger };
}

describe('projections on a thread of their own', () => {
  let service: RunningService;
  let merchant: TestMerchant;
  let teardown: () => Promise<void>;
  let seq = 0;
  const submit = async () => {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `PT-${++seq}`, sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '2001' } }),
    });
    expect(reply.status).toBe(202);
    return reply.body.data.order_no as string;
  };
  const stageOf = async (orderNo: string) =>
    (await service.pool.query<{ stage: string }>('select stage from rm_orders where order_no = $1', [orderNo])).rows[0]?.stage;
  const threadConnections = async (pool = service.pool) =>
    Number(
      (
        await pool.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = current_database() and application_name = $1', [
          PROJECTION_THREAD_APPLICATION,
        ])
      ).rows[0].n,
    );

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
  });
  afterAll(() => teardown());

  it('the service applies them there, over connections of their own, and reports each batch', async () => {
    expect(service.projections).toBeInstanceOf(ThreadedProjectionRunner);
    const types: string[] = [];
    service.projections.onApplied((batch) => types.push(...batch.types));
    const orderNo = await submit();
    await service.catchUp();
    expect(await stageOf(orderNo)).toBe('accepted');
    expect(types).toContain('OrderAccepted');
    expect(await threadConnections()).toBeGreaterThan(0);
  });

  it('a thread that ends by surprise is started again, and applies what was appended meanwhile', async () => {
    // The thread is private to the runner; the test ends it as a crash would.
    const thread = (service.projections as unknown as { worker: Worker }).worker;
    await thread.terminate();
    const orderNo = await submit();
    expect(
      await until(
        () => stageOf(orderNo),
        (stage) => stage === 'accepted',
      ),
    ).toBe('accepted');
    await service.catchUp();
    expect((service.projections as unknown as { worker?: Worker }).worker).not.toBe(thread);
  });

  it('with PROJECTION_THREAD=false the service applies them on its main thread, over its own pool', async () => {
    const inProcess = await serviceOnFreshDatabase({ PROJECTION_THREAD: 'false' });
    try {
      expect(inProcess.service.projections).toBeInstanceOf(InProcessProjectionRunner);
      const other = await provisionMerchant(inProcess.service);
      const reply = await signedFetch(inProcess.service, other, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: 'PT-main', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '2001' } }),
      });
      expect(reply.status).toBe(202);
      await inProcess.service.catchUp();
      const { rows } = await inProcess.service.pool.query('select stage from rm_orders where order_no = $1', [reply.body.data.order_no]);
      expect(rows).toEqual([{ stage: 'accepted' }]);
      expect(await threadConnections(inProcess.service.pool)).toBe(0);
    } finally {
      await inProcess.teardown();
    }
  });

  describe('started and stopped on its own', () => {
    let db: TestDatabase;
    const config = (database: TestDatabase['config']) => ({
      eventStore: 'postgres' as const,
      database,
      eventStorePollIntervalMs: 200,
      eventStoreStreamPrefix: '',
    });

    beforeAll(async () => {
      db = await createTestDatabase();
      await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
    });
    afterAll(() => db.drop());

    it('stop ends the thread and closes its connections', async () => {
      const { lines, logger } = collectingLogger();
      const runner = new ThreadedProjectionRunner(fedProjections, config(db.config), logger);
      await runner.start();
      expect(lines).toEqual([
        { level: 'log', message: 'applying orders, wallets, order-minutes, fulfilment-jobs, callback-schedule on a thread of their own' },
      ]);
      expect(await threadConnections(db.pool)).toBeGreaterThan(0);
      await runner.stop();
      expect(
        await until(
          () => threadConnections(db.pool),
          (n) => n === 0,
          5000,
        ),
      ).toBe(0);
    });

    it("a database fault in the thread reaches the starter's logger as a warning, without a stack", async () => {
      const { lines, logger } = collectingLogger();
      const runner = new ThreadedProjectionRunner(fedProjections, config(db.config), logger);
      const dba = new Client({ ...db.config, database: 'postgres' });
      await dba.connect();
      try {
        await runner.start();
        await dba.query(`alter database ${quoteIdentifier(db.name)} allow_connections false`);
        await dba.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2', [
          db.name,
          PROJECTION_THREAD_APPLICATION,
        ]);
        // The thread's next poll of the log (every 200 ms here) finds no connection.
        const warnings = await until(
          async () => lines.filter((line) => line.level === 'warn'),
          (found) => found.length > 0,
          10_000,
        );
        expect(warnings[0].message).toMatch(/^projections failed a batch; retrying: database unavailable \(/);
        expect(lines.filter((line) => line.level === 'error')).toEqual([]);
      } finally {
        await dba.query(`alter database ${quoteIdentifier(db.name)} allow_connections true`);
        await dba.end();
        await runner.stop();
      }
    });

    it('start fails with the error of the database when the thread cannot reach it', async () => {
      const { logger } = collectingLogger();
      const runner = new ThreadedProjectionRunner(fedProjections, config({ ...db.config, host: '127.0.0.1', port: 1 }), logger);
      const failure = await runner.start().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(failure)).toBe(true);
    });
  });
});
