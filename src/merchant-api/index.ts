/**
 * The merchant API's public face beyond its module: the admission tables
 * (nonces, rate windows), which the schema (src/schema.ts) creates. Its
 * routes are in routes.public.ts.
 */
export { merchantApiMigrations } from './gateway/replay-guard.migrations';
