/**
 * The merchant API's public face beyond its module: the admission tables
 * (nonces, rate windows), which the schema (src/schema.ts) creates, and the
 * backlog policy's guard, whose status readiness and the metrics show. Its
 * routes are in routes.public.ts.
 */
export { merchantApiMigrations } from './gateway/replay-guard.migrations';
export { IntakeGuard, type IntakeStatus } from './gateway/intake-guard';
