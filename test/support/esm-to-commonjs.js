// NestJS 12 ships its packages as ES modules only. Node loads them from the
// service's CommonJS with require(esm), but Jest's sandbox can only do so on
// Node 24.9+ with --experimental-vm-modules; compiling them to CommonJS here
// lets the suite run on every Node the service supports, with Jest's cache.
const { createHash } = require('node:crypto');
const swc = require('@swc/core');
const swcVersion = require('@swc/core/package.json').version;

const OPTIONS = {
  swcrc: false,
  sourceMaps: true,
  // import() too: the sandbox cannot import an ES module (Nest loads its default HTTP adapter so).
  module: { type: 'commonjs' },
  jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } },
};
const OPTIONS_KEY = `${swcVersion}\0${JSON.stringify(OPTIONS)}`;

module.exports = {
  process(source, filename) {
    const { code, map } = swc.transformSync(source, { ...OPTIONS, filename });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return createHash('sha256').update(OPTIONS_KEY).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};
