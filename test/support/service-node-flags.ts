/**
 * Node's flags for the service, as `npm start`, `npm run start:prod` and the
 * image give them (test/startup/node-flags.test.ts keeps them in step): the
 * tests' and the benchmark's service processes run as production does.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--initial-old-space-size=256', '--no-allocation-site-pretenuring'];

/** How `npm start` and the operators' tools load the TypeScript (package.json): the tests' child processes load it the same way. */
export const TYPESCRIPT_LOADER: readonly string[] = ['-r', './scripts/register-typescript.js'];
