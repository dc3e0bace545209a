/**
 * The back office's public API: staff sign-in and sessions, which the console
 * (src/console) is built on, and the back office's tables, which the schema
 * (src/schema.ts) creates, and the approvals inbox's rebuild, which the CLI
 * runs.
 */
export { ConsoleSessions, SESSION_LIFETIME_SECONDS } from './auth/console-sessions';
export { consoleSessionMigrations } from './auth/console-sessions.migrations';
export { CSRF_HEADER, sessionCookie, sessionCookieHeader } from './auth/session-cookie';
export { StaffAuthenticator } from './auth/staff-authenticator';
export { rebuildRunMigrations } from './read-models/rebuild-runs.migrations';
export { approvalMigrations } from './approvals/approvals.migrations';
export { rebuildApprovalRows } from './approvals/approval-log';
export { requeryJobMigrations } from './reconciliation/requery/requery-jobs.migrations';
export { upstreamReportMigrations } from './reconciliation/reports/upstream-reports.migrations';
