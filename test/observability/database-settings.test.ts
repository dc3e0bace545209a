import { ChildService, spawnService } from '../support/child-service';
import { until } from '../support/until';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { quoteIdentifier } from '../../src/infrastructure/postgres/connection';

describe('start-up: a warning for each Postgres setting that breaks a promise of the service', () => {
  let db: TestDatabase;
  let service: ChildService;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Every session on this database commits without waiting for the disk.
    await db.pool.query(`alter database ${quoteIdentifier(db.name)} set synchronous_commit = off`);
    service = await spawnService(db, { LOG_FORMAT: 'json' });
  });
  afterAll(async () => {
    await service?.kill('SIGTERM');
    await db.drop();
  });

  const warnings = () =>
    service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level?: string; context?: string; message?: string })
      .filter((line) => line.context === 'DatabaseSettings');

  it('names synchronous_commit = off, and autovacuum exactly when the server runs without it', async () => {
    await until(
      async () => warnings(),
      (found) => found.some((w) => w.message?.includes('synchronous_commit')),
      10_000,
    );
    const client = await db.pool.connect();
    const autovacuum = (await client.query<{ autovacuum: string }>('show autovacuum')).rows[0].autovacuum;
    client.release();
    const named = warnings().map((w) => [w.level, w.message?.split(':')[0]]);
    expect(named).toEqual([['warn', 'Postgres synchronous_commit = off'], ...(autovacuum === 'on' ? [] : [['warn', 'Postgres autovacuum = off']])]);
    // The service runs on regardless.
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
  });
});
