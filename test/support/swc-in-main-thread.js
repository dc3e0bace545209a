// A service started inside a Jest worker runs its projections on a worker
// thread, under ts-node, which transpiles with swc's native addon. When the
// addon is first loaded by such a thread, the next thread to load it after
// that thread has ended crashes the process (SIGSEGV in the addon's module
// registration). Loading it once on the process's main thread, outside the
// test's sandbox, keeps it registered for the process's life, as `npm start`
// (ts-node on the main thread) and an in-band run (global-setup.js) always do.
require('@swc/core').transformSync('', {});
