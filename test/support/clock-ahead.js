// Preloaded into a service process (NODE_OPTIONS=--require): its Date.now() runs
// CLOCK_AHEAD_MS ahead of the machine's, as another machine's clock would.
const ahead = Number(process.env.CLOCK_AHEAD_MS);
if (!Number.isFinite(ahead)) throw new Error('clock-ahead.js needs CLOCK_AHEAD_MS');
const machineNow = Date.now;
Date.now = () => machineNow() + ahead;
