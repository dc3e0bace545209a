/**
 * Runs the upstream simulator on its own: `npm run upstream-sim` (PORT, default 8090;
 * UPSTREAM_SIM_DELAY_MS, the delivery delay, default 200; UPSTREAM_SIM_FAILURE_DELAY_MS,
 * how long a refusal takes, default 0). With UPSTREAM_SIM_DATABASE_URL it keeps its
 * orders in that Postgres database (created if missing) and answers the same after
 * a restart; without it, in memory, and a status query for an order it does not
 * know answers "unknown" rather than "not received".
 */
import { createPool, ensureDatabase } from '../../infrastructure/postgres/connection';
import { migrate } from '../../infrastructure/postgres/migrations';
import { MemorySimulatorStore, PostgresSimulatorStore } from './simulator-store';
import { simulatorMigrations } from './simulator-store.migrations';
import { startUpstreamSimulator } from './upstream-simulator';

async function main() {
  const port = Number(process.env.PORT ?? 8090);
  const deliveryDelayMs = Number(process.env.UPSTREAM_SIM_DELAY_MS ?? 200);
  const failureDelayMs = Number(process.env.UPSTREAM_SIM_FAILURE_DELAY_MS ?? 0);
  if (![port, deliveryDelayMs, failureDelayMs].every((n) => Number.isInteger(n) && n >= 0)) {
    throw new Error('PORT, UPSTREAM_SIM_DELAY_MS and UPSTREAM_SIM_FAILURE_DELAY_MS must be whole numbers');
  }
  const databaseUrl = process.env.UPSTREAM_SIM_DATABASE_URL;
  const pool = databaseUrl ? createPool({ connectionString: databaseUrl }, { max: 4 }) : undefined;
  if (databaseUrl && pool) {
    await ensureDatabase({ connectionString: databaseUrl }, { create: true });
    await migrate(pool, simulatorMigrations);
  }
  const store = pool ? new PostgresSimulatorStore(pool) : new MemorySimulatorStore();
  const simulator = await startUpstreamSimulator({ port, host: '0.0.0.0', deliveryDelayMs, failureDelayMs, store });
  const kept = pool ? 'orders kept in UPSTREAM_SIM_DATABASE_URL' : 'orders kept in memory: after a restart, status queries for unknown orders answer "unknown"';
  console.log(`upstream simulator listening on port ${port} (delivery delay ${deliveryDelayMs} ms, refusal delay ${failureDelayMs} ms; ${kept})`);
  const stop = () =>
    void simulator
      .stop()
      .then(() => pool?.end())
      .then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
