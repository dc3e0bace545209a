// Runs once before the suites: say which event stores the contract suite covers,
// and whether the console's browser tests run.
const { findChromium } = require('./support/chromium');

module.exports = async () => {
  const chromium = findChromium();
  console.log(chromium.path ? `\nConsole browser tests: Chromium at ${chromium.path}` : `\nConsole browser tests SKIPPED: ${chromium.reason}`);
  if (process.env.EVENTSTORE_CONNECTION_STRING) {
    console.log('\nEvent store contract suite: PostgreSQL and EventStoreDB (EVENTSTORE_CONNECTION_STRING is set)');
  } else {
    console.log(
      '\nEvent store contract suite: PostgreSQL only. EventStoreDB skipped: EVENTSTORE_CONNECTION_STRING is not set ' +
        "(docker compose up -d eventstore; EVENTSTORE_CONNECTION_STRING='esdb://localhost:2113?tls=false' npm test)",
    );
  }
};
