// Unit specs live beside the code; integration suites under test/ talk to a real
// Postgres and create and drop their own databases.
// Transpile only (tsconfig's isolatedModules): `npm test` type-checks with tsc first.
const transform = { '^.+\\.ts$': ['ts-jest', {}], '/node_modules/.+\\.js$': '<rootDir>/test/support/esm-to-commonjs.js' };
// Packages published as ES modules only, compiled to CommonJS for the sandbox (test/support/esm-to-commonjs.js).
const ESM_ONLY = ['@nestjs', 'file-type', 'strtok3', 'token-types', '@tokenizer', 'uint8array-extras', '@borewit'];
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`];

module.exports = {
  // Applies to every project (Jest ignores it per project).
  testTimeout: 120000,
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: '<rootDir>/test/support/quiet-environment.js',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/projections/**/*.spec.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: '<rootDir>/test/support/quiet-environment.js',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // Suites with clusters of their own run apart (jest.drills.config.js): `npm run test:restore`, `npm run test:ha`.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/backup/', '<rootDir>/test/ha/'],
    },
  ],
};
