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

const READ_MODEL_TABLES = {
  selector: 'TemplateElement[value.raw=/\\brm_\\w+/], Literal[value=/\\brm_\\w+/]',
  message: "Read models (rm_*) are read by the projections' own query code (projections/*.queries.ts) or a *.reader.ts of the slice.",
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.data/', 'examples/', 'src/console/assets/', '**/*.mjs', '**/*.js', '**/*.cjs'] },
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
    // The projections' read models (rm_*) are read only by the code that owns them.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.reader.ts', 'src/**/*.queries.ts', 'src/auditing/verification/**', 'src/**/*.spec.ts', 'src/**/*.migrations.ts', 'src/schema.ts'],
    rules: {
      'no-restricted-syntax': ['error', READ_MODEL_TABLES],
    },
  },
  {
    // Controllers translate HTTP to commands and queries: SQL lives in a reader or a repository of the slice.
    files: ['src/**/*.controller.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'pg', message: "A controller holds no SQL: query through the slice's reader or repository." }] }],
      // Both selectors: a later block's list replaces an earlier one's for the same files.
      'no-restricted-syntax': ['error', READ_MODEL_TABLES, ...sqlSelectors("A controller holds no SQL: query through the slice's reader or repository.")],
    },
  },
  {
    // Tests read untyped JSON replies.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
