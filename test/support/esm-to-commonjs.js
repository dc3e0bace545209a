// NestJS 12 ships its packages as ES modules only. Node loads them from the
// service's CommonJS with require(esm), but Jest's sandbox can only do so on
// Node 24.9+ with --experimental-vm-modules; compiling them to CommonJS here
// lets the suite run on every Node the service supports, with Jest's cache.
const { createHash } = require('node:crypto');
const swc = require('@swc/core');
const swcVersion = require('@swc/core/package.json').version;

module.exports = {
  process(source, filename) {
    const { code, map } = swc.transformSync(source, {
      filename,
      swcrc: false,
      sourceMaps: true,
      module: { type: 'commonjs', ignoreDynamic: true },
      jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } },
    });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return createHash('sha256').update(swcVersion).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};
