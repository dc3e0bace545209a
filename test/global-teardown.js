// Stops the embedded PostgreSQL that global-setup.js started, if it did.
const { rmSync } = require('node:fs');

module.exports = async () => {
  const started = globalThis.__embeddedPostgres;
  if (!started) return;
  await started.server.stop();
  rmSync(started.dir, { recursive: true, force: true });
};
