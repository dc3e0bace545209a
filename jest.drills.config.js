// Suites that bring clusters of their own and take minutes, so `npm test` leaves them out
// (jest.config.js); CI runs them right after it (.ci/run):
// - restore-drill (test/backup/): a PostgreSQL cluster archived with pgBackRest, restored
//   to an instant, the service started on the copy (`npm run test:restore`);
// - ha (test/ha/): the service on a Patroni cluster behind HAProxy through a kill -9 of the
//   primary and a switchover (`npm run test:ha`; root, patroni, etcd and haproxy).
// Neither needs the suites' shared Postgres (global-setup.js).
const { projects, ...base } = require('./jest.config');

const integration = projects.find((p) => p.displayName === 'integration');

module.exports = {
  testTimeout: base.testTimeout,
  projects: [
    { ...integration, displayName: 'restore-drill', testMatch: ['<rootDir>/test/backup/**/*.test.ts'], testPathIgnorePatterns: [] },
    { ...integration, displayName: 'ha', testMatch: ['<rootDir>/test/ha/**/*.test.ts'], testPathIgnorePatterns: [] },
  ],
};
