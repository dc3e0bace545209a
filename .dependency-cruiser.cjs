/**
 * The architecture's dependency rules, checked by `npm run lint` (and so by `npm test`).
 *
 *   src/shared, *.decider.ts   the domain: pure TypeScript, imports only itself
 *   src/ledger                 the core: deciders, the command handlers, the wallet writer, the ports
 *   src/infrastructure, config adapters and plumbing: know the core's ports, no capability
 *   everything else            capabilities (merchant-api, back-office, fulfilment, ...),
 *                              each reached from outside only through its public files
 *   src/*.ts                   the entry points (main, app module, schema, start-up checks):
 *                              wire the capabilities together through those same public files
 *   src/console/app            the console's browser script: only types from the service
 */
const CAPABILITIES = [
  'api-docs',
  'auditing',
  'back-office',
  'callbacks',
  'cli',
  'console',
  'fulfilment',
  'merchant-api',
  'merchant-client',
  'merchant-directory',
  'observability',
];
const CAPABILITY = `^src/(${CAPABILITIES.join('|')})/`;
/** What a capability shows the rest of the service: its Nest module, its index and its *.public.ts files. */
const PUBLIC_FILES = ['\\.module\\.ts$', '/index\\.ts$', '\\.public\\.ts$'];

module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'The deciders and src/shared import no framework, driver, adapter or capability: only each other and node built-ins.',
      severity: 'error',
      from: { path: ['^src/shared/', '\\.decider\\.ts$'], pathNot: '\\.spec\\.ts$' },
      to: {
        pathNot: ['^src/shared/', '\\.decider\\.ts$'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'plumbing-knows-no-capability',
      comment: 'src/infrastructure, src/shared and src/config import no capability, no projection and nothing of the core but its ports.',
      severity: 'error',
      from: { path: '^src/(infrastructure|shared|config)/' },
      to: { path: [CAPABILITY, '^projections/', '^src/ledger/(?!ports/)', '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'shared-knows-no-infrastructure',
      comment: 'The kernel is what adapters are built on, so nothing in src/shared, not even a spec, imports an adapter or plumbing.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/infrastructure/' },
    },
    {
      name: 'config-is-the-bottom',
      comment: 'Configuration is read by everything, so it imports no infrastructure (which reads it).',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/infrastructure/' },
    },
    {
      name: 'core-knows-no-infrastructure',
      comment:
        'The ledger talks to storage, configuration, metrics and logs through its ports (src/ledger/ports), which the application provides: it imports nothing of src/infrastructure or src/config.',
      severity: 'error',
      from: { path: '^src/ledger/' },
      to: { path: '^src/(infrastructure|config)/' },
    },
    {
      name: 'core-knows-no-capability',
      comment: 'The ledger is called by the capabilities, never the other way round; read models reach it only through a port.',
      severity: 'error',
      from: { path: '^src/ledger/' },
      to: { path: [CAPABILITY, '^projections/', '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'projections-know-the-core-only',
      comment: 'Projections build read models from events: they import the core, shared and plumbing, no capability.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: [CAPABILITY, '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'capabilities-meet-through-public-files',
      comment: "A capability reaches another only through that capability's public files (its *.module.ts, index.ts or *.public.ts), never its internals.",
      severity: 'error',
      from: { path: `^src/(${CAPABILITIES.join('|')})/` },
      to: {
        path: CAPABILITY,
        pathNot: ['^src/$1/', ...PUBLIC_FILES],
      },
    },
    {
      name: 'entry-points-meet-capabilities-through-public-files',
      comment:
        'The top-level files (main, the app module, the schema, the start-up checks) put the capabilities together through their public files, like any capability would, never their internals.',
      severity: 'error',
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: CAPABILITY, pathNot: PUBLIC_FILES },
    },
    {
      name: 'console-app-imports-only-types-from-the-server',
      comment:
        "The console's script (src/console/app) runs in the browser, bundled by esbuild: of the service it imports only types (the replies it reads), which the bundle leaves out; no value, no node built-in, no package.",
      severity: 'error',
      from: { path: '^src/console/app/' },
      to: { pathNot: '^src/console/app/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      comment: 'Modules that import each other cannot be understood, tested or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'production-code-never-imports-tests',
      severity: 'error',
      from: { path: '^(src|projections)/', pathNot: '\\.spec\\.ts$' },
      to: { path: ['^test/', '\\.spec\\.ts$'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
