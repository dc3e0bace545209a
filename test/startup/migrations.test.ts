import { randomBytes } from 'node:crypto';
import { Client, PoolConfig } from 'pg';
import { allProjections } from '../../projections/all-projections';
import { projectionMigrations } from '../../projections/projection-runner';
import { eventStoreMigrations } from '../../src/infrastructure/event-store/postgres-event-store.migrations';
import { connectionConfig } from '../../src/config/database-connection';
import { createPool, ensureDatabase, quoteIdentifier } from '../../src/infrastructure/postgres/connection';
import { migrate, Migration } from '../../src/infrastructure/postgres/migrations';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const migrations: readonly Migration[] = [...eventStoreMigrations, ...projectionMigrations(allProjections)];

describe('migrate', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('topup_migrations');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('has unique migration ids', () => {
    expect(migrations.length).toBeGreaterThan(0);
    expect(new Set(migrations.map((m) => m.id)).size).toBe(migrations.length);
  });

  it('is safe to run from two instances at once, and applies nothing the third time', async () => {
    // Two separate pools: two instances starting at once.
    const first = createPool(db.config, { max: 2 });
    const second = createPool(db.config, { max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(first, migrations), migrate(second, migrations)]);

      // Together they applied everything, each migration once, in order.
      const allIds = migrations.map((m) => m.id);
      expect([...a, ...b].sort()).toEqual([...allIds].sort());
      expect(a.filter((id) => b.includes(id))).toEqual([]);
      for (const applied of [a, b]) {
        expect(applied).toEqual(allIds.filter((id) => applied.includes(id)));
      }

      const { rows } = await db.pool.query<{ id: string; n: string }>('select id, count(*)::text as n from schema_migrations group by id');
      expect(rows.map((r) => r.id).sort()).toEqual([...allIds].sort());
      expect(rows.every((r) => r.n === '1')).toBe(true);

      // The schema they made is there.
      const tables = await db.pool.query<{ t: string | null }>(`select to_regclass('es_events')::text as t
        union all select to_regclass('projection_checkpoints')::text`);
      expect(tables.rows.map((r) => r.t)).toEqual(['es_events', 'projection_checkpoints']);

      expect(await migrate(first, migrations)).toEqual([]);
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
  });

  it('applies only migrations added since the last run', async () => {
    const pool = createPool(db.config, { max: 2 });
    try {
      const added: Migration = { id: 'test/999-added-later', sql: 'create table added_later (id int primary key)' };
      expect(await migrate(pool, [...migrations, added])).toEqual([added.id]);
      expect(await migrate(pool, [...migrations, added])).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('rolls back a failing migration and records nothing for it', async () => {
    const pool = createPool(db.config, { max: 2 });
    try {
      const broken: Migration = { id: 'test/998-broken', sql: 'create table half_done (id int); select * from no_such_table' };
      await expect(migrate(pool, [...migrations, broken])).rejects.toThrow(/test\/998-broken/);
      const { rows } = await pool.query(`select 1 from schema_migrations where id = $1`, [broken.id]);
      expect(rows).toHaveLength(0);
      const table = await pool.query<{ t: string | null }>(`select to_regclass('half_done')::text as t`);
      expect(table.rows[0].t).toBeNull();
      // The lock was released: another run is not blocked.
      expect(await migrate(pool, migrations)).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

describe('ensureDatabase', () => {
  const server = connectionConfig(process.env.DATABASE_URL);
  const created: string[] = [];

  function configFor(name: string): PoolConfig {
    if (!server.connectionString) return { ...server, database: name };
    const url = new URL(server.connectionString);
    url.pathname = `/${name}`;
    return { connectionString: url.toString() };
  }

  function newName(): string {
    const name = `topup_ensure_${randomBytes(5).toString('hex')}`;
    created.push(name);
    return name;
  }

  async function withAdmin<T>(work: (admin: Client) => Promise<T>): Promise<T> {
    const admin = new Client(configFor('postgres'));
    await admin.connect();
    try {
      return await work(admin);
    } finally {
      await admin.end();
    }
  }

  const exists = (name: string) => withAdmin(async (admin) => (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1);

  afterAll(async () => {
    await withAdmin(async (admin) => {
      for (const name of created) await admin.query(`drop database if exists ${quoteIdentifier(name)} with (force)`);
    });
  });

  it('creates a missing database', async () => {
    const name = newName();
    expect(await exists(name)).toBe(false);
    await ensureDatabase(configFor(name));
    expect(await exists(name)).toBe(true);
    const client = new Client(configFor(name));
    await client.connect();
    await client.end();
  });

  it('leaves an existing database alone', async () => {
    const name = newName();
    await ensureDatabase(configFor(name));
    await ensureDatabase(configFor(name));
    expect(await exists(name)).toBe(true);
  });

  it('is safe when called twice at once for the same new database', async () => {
    for (let round = 0; round < 3; round++) {
      const name = newName();
      const results = await Promise.allSettled([ensureDatabase(configFor(name)), ensureDatabase(configFor(name))]);
      const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason?.message ?? r.reason) + ` (code ${r.reason?.code})`] : []));
      expect(failures).toEqual([]);
      expect(await exists(name)).toBe(true);
    }
  });
});
