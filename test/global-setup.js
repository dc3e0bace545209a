// Runs once before the suites: find a Postgres (or start one), say which event stores the suites run on,
// and whether the console's browser tests and the merchant examples run.
require('ts-node').register({ transpileOnly: true });
const { mkdtempSync, chmodSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { answers, parseAddress, DEFAULT_PROBE } = require('../src/infrastructure/postgres/embedded/local-database');
const { startEmbeddedPostgres } = require('../src/infrastructure/postgres/embedded/embedded-postgres');
const { detectToolchains } = require('./examples/toolchains');
const { findChromium } = require('./support/chromium');

const PG_VARIABLES = ['DATABASE_URL', 'PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE'];

module.exports = async () => {
  await findPostgres();
  const chromium = findChromium();
  console.log(chromium.path ? `\nConsole browser tests: Chromium at ${chromium.path}` : `\nConsole browser tests SKIPPED: ${chromium.reason}`);
  const toolchains = detectToolchains();
  const skipped = toolchains.filter((t) => t.missing);
  console.log(
    `\nMerchant examples: ${
      toolchains
        .filter((t) => t.version)
        .map((t) => `${t.language} (${t.version})`)
        .join(', ') || 'none can run'
    }` + skipped.map((t) => `\nSKIPPED: the ${t.language} example: ${t.missing}`).join(''),
  );
  // test/support/event-stores.ts runs the same suites once per store.
  const suites = 'the event store contract suite, the two-instance and kill -9 suites and the documentation test';
  if (process.env.EVENTSTORE_CONNECTION_STRING) {
    console.log(`\nEvent stores: PostgreSQL and EventStoreDB (EVENTSTORE_CONNECTION_STRING is set) for ${suites}`);
  } else {
    console.log(
      `\nEvent stores: PostgreSQL only. EventStoreDB SKIPPED for ${suites}: EVENTSTORE_CONNECTION_STRING is not set ` +
        "(docker compose up -d eventstore; EVENTSTORE_CONNECTION_STRING='esdb://localhost:2113?tls=false' npm test)",
    );
  }
};

/**
 * The suites use the Postgres that DATABASE_URL or PG* name, else the one on
 * 127.0.0.1:5432 (EMBEDDED_POSTGRES_PROBE); when nothing answers there, an
 * embedded PostgreSQL of the run's own, in a temporary directory, stopped by
 * global-teardown.js (or when Jest's process ends).
 */
async function findPostgres() {
  if (PG_VARIABLES.some((name) => process.env[name])) return;
  const probe = parseAddress(process.env.EMBEDDED_POSTGRES_PROBE || DEFAULT_PROBE);
  if (await answers(probe.host, probe.port)) return;
  const dir = mkdtempSync(join(tmpdir(), 'topup-test-pg-'));
  // Run as root, the server runs as the postgres user, who must reach its data directory.
  chmodSync(dir, 0o755);
  const started = Date.now();
  // Like the machine's server the suites otherwise use: trust on loopback, 400 connections.
  const server = await startEmbeddedPostgres({
    dataDir: join(dir, 'data'),
    trustLocalConnections: true,
    settings: { max_connections: '400', fsync: 'off' },
  });
  globalThis.__embeddedPostgres = { server, dir };
  // PG* rather than DATABASE_URL: the suites name their own databases on the server these name.
  Object.assign(process.env, { PGHOST: '127.0.0.1', PGPORT: String(server.port), PGUSER: 'postgres' });
  console.log(
    `\nPostgreSQL: nothing answers on ${probe.host}:${probe.port} and neither DATABASE_URL nor PG* is set: ` +
      `the suites use an embedded PostgreSQL on 127.0.0.1:${server.port} (started in ${((Date.now() - started) / 1000).toFixed(1)} s, data in ${dir})`,
  );
}
