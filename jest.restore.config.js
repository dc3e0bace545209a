// The restore drill (test/backup/): a PostgreSQL cluster of its own, archived with
// pgBackRest, restored to an instant, the service started on the copy. About two
// minutes and it needs pgBackRest, so `npm test` leaves it out: `npm run test:restore`.
const { projects, ...base } = require('./jest.config');

const integration = projects.find((p) => p.displayName === 'integration');

module.exports = {
  // Its own cluster: the suites' shared Postgres (global-setup.js) is not needed.
  testTimeout: base.testTimeout,
  projects: [{ ...integration, displayName: 'restore-drill', testMatch: ['<rootDir>/test/backup/**/*.test.ts'], testPathIgnorePatterns: [] }],
};
