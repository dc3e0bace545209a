// Lint rules for the TypeScript sources. Formatting is Prettier's job (.prettierrc.json)
// and the dependency rules are dependency-cruiser's (.dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** String and template pieces that look like SQL statements. */
function sqlSelectors(message) {
  const sql = '/\\b(select\\s[\\s\\S]*\\sfrom|insert\\s+into|update\\s+\\w+\\s+set|delete\\s+from)\\b/i';
  return [
    { selector: `TemplateElement[value.raw=${sql}]`, message },
    { selector: `Literal[value=${sql}]`, message },
  ];
}

/**
 * The tables the projections own, each read and written, outside the
 * projection that writes it, by one module: its owner, which every other
 * slice calls. `alsoIn` names the few other files whose SQL may name the
 * table, and why; `message`, when given, replaces the usual one.
 */
const TABLE_OWNERS = {
  rm_orders: {
    owner: 'projections/orders.queries.ts',
    alsoIn: {
      // Each joins the order's row in a statement about its own table.
      'projections/wallets.queries.ts': 'the stray holds',
      'projections/callback-claims.queries.ts': "a claim reads the callback's body",
      'projections/callback-schedule.projection.ts': "a delivery's merchant, written with it",
    },
  },
  rm_wallets: { owner: 'projections/wallets.queries.ts' },
  rm_wallet_holds: { owner: 'projections/wallets.queries.ts' },
  rm_statement_lines: { owner: 'projections/wallets.queries.ts' },
  rm_wallet_snapshots: { owner: 'projections/wallets.queries.ts' },
  // The senders' claims and attempts in one file, what staff and operators read of them in the other.
  callback_deliveries: {
    owner: 'projections/callback-schedule.queries.ts',
    alsoIn: { 'projections/callback-claims.queries.ts': 'the claims', 'projections/callback-log.queries.ts': 'the log, redelivery and backlog' },
  },
  callback_attempts: {
    owner: 'projections/callback-schedule.queries.ts',
    alsoIn: {
      'projections/callback-claims.queries.ts': 'a claim writes the attempt it starts',
      'projections/callback-log.queries.ts': 'the delivery log',
      'src/callbacks/callbacks.migrations.ts': 'creates it',
    },
  },
  callback_attempt_minutes: {
    owner: 'projections/callback-schedule.queries.ts',
    alsoIn: { 'projections/callback-log.queries.ts': "the attempts' results over time", 'src/callbacks/callbacks.migrations.ts': 'creates it' },
  },
  fulfilment_jobs: { owner: 'projections/fulfilment-jobs.queries.ts' },
  rm_order_minutes: { owner: 'projections/order-minutes.queries.ts' },
  rm_upstream_latency: { owner: 'projections/order-minutes.queries.ts' },
  rm_upstream_sends: { owner: 'projections/order-minutes.queries.ts' },
  projection_checkpoints: {
    owner: 'projections/checkpoints.ts',
    alsoIn: {
      'projections/checkpoints.migrations.ts': 'creates it',
      'src/infrastructure/event-store/event-store-binding.ts': 'tells which store a database from before the binding followed',
    },
  },
  event_store_binding: { owner: 'src/infrastructure/event-store/event-store-binding.ts' },
  // The PostgreSQL adapter's log: everyone else reads events through the port, so every module works on both stores.
  es_events: {
    owner: 'src/infrastructure/event-store/postgres-event-store.ts',
    alsoIn: {
      'src/infrastructure/event-store/postgres-event-rows.ts': "the adapter's columns and slices",
      'src/infrastructure/event-store/postgres-append-function.ts': 'the append function',
      'src/infrastructure/event-store/postgres-event-store.migrations.ts': 'creates it',
      'src/infrastructure/event-store/event-store-binding.ts': 'tells which store a database from before the binding followed',
    },
    message:
      "es_events is the PostgreSQL adapter's: read events through the event-store port (src/ledger/ports/event-store.port.ts), which EventStoreDB implements too.",
  },
  // Not read models, but held to the same rule: bulk reconciliation's jobs and reports, each read and written in one place.
  requery_jobs: {
    owner: 'src/back-office/reconciliation/requery/requery-jobs.ts',
    alsoIn: { 'src/back-office/reconciliation/requery/requery-jobs.migrations.ts': 'creates it' },
  },
  requery_items: {
    owner: 'src/back-office/reconciliation/requery/requery-jobs.ts',
    alsoIn: { 'src/back-office/reconciliation/requery/requery-jobs.migrations.ts': 'creates it' },
  },
  upstream_reports: {
    owner: 'src/back-office/reconciliation/reports/upstream-reports.ts',
    alsoIn: { 'src/back-office/reconciliation/reports/upstream-reports.migrations.ts': 'creates it' },
  },
  upstream_report_items: {
    owner: 'src/back-office/reconciliation/reports/upstream-reports.ts',
    alsoIn: { 'src/back-office/reconciliation/reports/upstream-reports.migrations.ts': 'creates it' },
  },
};

/** SQL in a string or template that reads or writes the table: the table after from, join, into, update, using or table. */
function tableSelectors(table) {
  const sql = `/\\b(from|join|into|update|using|table|truncate)\\s+(only\\s+)?${table}\\b/i`;
  const message = TABLE_OWNERS[table].message ?? `${table} is read and written through ${TABLE_OWNERS[table].owner}, its owner: call a function there.`;
  return [
    { selector: `TemplateElement[value.raw=${sql}]`, message },
    { selector: `Literal[value=${sql}]`, message },
  ];
}

/** The selectors for every owned table but those the file may name (no file: every table). */
const tablesRefusedIn = (file) =>
  Object.entries(TABLE_OWNERS)
    .filter(([, { owner, alsoIn = {} }]) => file === undefined || (owner !== file && !Object.hasOwn(alsoIn, file)))
    .flatMap(([table]) => tableSelectors(table));

/** The owners and the files in `alsoIn`: each gets a block of its own that lets it name its tables. */
const TABLE_USERS = [...new Set(Object.values(TABLE_OWNERS).flatMap(({ owner, alsoIn = {} }) => [owner, ...Object.keys(alsoIn)]))];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.data/', 'examples/', '**/*.mjs', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // One import statement per module.
      'no-duplicate-imports': ['error', { includeExports: false }],
      // A leading underscore marks a value that is deliberately left unused.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Input validation matches control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // The projections' tables are read and written only by their owners (TABLE_OWNERS).
    files: ['src/**/*.ts', 'projections/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...tablesRefusedIn(undefined)],
    },
  },
  // Later blocks replace an earlier one's list for the same files: each owner's list leaves out its own tables.
  ...TABLE_USERS.map((file) => ({ files: [file], rules: { 'no-restricted-syntax': ['error', ...tablesRefusedIn(file)] } })),
  {
    // Controllers translate HTTP to commands and queries: SQL lives in a reader or a repository of the slice.
    files: ['src/**/*.controller.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'pg', message: "A controller holds no SQL: query through the slice's reader or repository." },
            {
              name: '@nestjs/common',
              importNames: ['Query'],
              message:
                'Query strings are read with @QueryString (src/back-office/http/query-string.ts), one rule for every route: unknown, repeated, empty or malformed parameters are refused.',
            },
          ],
        },
      ],
      // Both selectors: a later block's list replaces an earlier one's for the same files.
      'no-restricted-syntax': [
        'error',
        ...tablesRefusedIn(undefined),
        ...sqlSelectors("A controller holds no SQL: query through the slice's reader or repository."),
      ],
    },
  },
  {
    // The console shows text from the service (merchant names, notes, callback replies): it builds elements
    // with h() (src/console/app/dom.ts), and nothing in it may hand a string to the browser's HTML parser.
    files: ['src/console/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'createContextualFragment', 'setHTMLUnsafe', 'parseHTMLUnsafe'].map((property) => ({
          property,
          message: `${property} parses text as HTML: build the elements with h() from src/console/app/dom.ts, which makes strings text nodes.`,
        })),
        ...['write', 'writeln'].map((property) => ({ object: 'document', property, message: 'document.write parses text as HTML: use h().' })),
      ],
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'DOMParser parses text as HTML: build the elements with h().' }],
    },
  },
  {
    // Tests read untyped JSON replies.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
