// Where Debian's Chromium is, for the browser tests: CHROMIUM_PATH, or the
// usual places. The npm registry's browser downloads are not used.
const { existsSync } = require('node:fs');

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

function findChromium() {
  if (process.env.CHROMIUM_PATH) {
    return existsSync(process.env.CHROMIUM_PATH)
      ? { path: process.env.CHROMIUM_PATH }
      : { reason: `CHROMIUM_PATH is ${process.env.CHROMIUM_PATH}, which does not exist` };
  }
  const path = CANDIDATES.find((p) => existsSync(p));
  return path ? { path } : { reason: `no Chromium at ${CANDIDATES.join(', ')} (apt-get install -y chromium, or set CHROMIUM_PATH)` };
}

module.exports = { findChromium };
