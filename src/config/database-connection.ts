import { PoolConfig } from 'pg';

/**
 * Connection settings: DATABASE_URL when set, otherwise libpq's PG* variables
 * (PGHOST may name a Unix socket directory), with local defaults.
 */
export function connectionConfig(databaseUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): PoolConfig {
  if (databaseUrl) return { connectionString: databaseUrl };
  return {
    host: env.PGHOST ?? '127.0.0.1',
    port: env.PGPORT ? Number(env.PGPORT) : 5432,
    user: env.PGUSER ?? 'postgres',
    password: env.PGPASSWORD,
    database: env.PGDATABASE ?? 'topup',
  };
}
