// `npm start`, the operators' tools (`npm run cli`, `upstream-sim`,
// `verify-statement`, `demo`), the tests' service processes and the
// benchmark's load TypeScript through this hook, not through ts-node's
// register: ts-node loads Node's repl and with it the domain module, whose
// async hook every promise of the process then passes (about 35 ns an await
// on the 2-core VM), so the service would not run as `npm run start:prod`
// runs it. The options are the ones ts-node derives from tsconfig.json for
// swc, decorator metadata included (NestJS reads the parameters' types).
const { readFileSync } = require('node:fs');
const swc = require('@swc/core');

const OPTIONS = {
  swcrc: false,
  sourceMaps: false,
  module: { type: 'commonjs', noInterop: false, strictMode: true },
  jsc: {
    target: 'es2022',
    keepClassNames: true,
    parser: { syntax: 'typescript', decorators: true, dynamicImport: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
  },
};

require.extensions['.ts'] = (module, filename) => {
  module._compile(swc.transformSync(readFileSync(filename, 'utf8'), { ...OPTIONS, filename }).code, filename);
};
