/**
 * The fulfilment capability's public API: the upstream provider, which
 * reconciliation asks about an order's fate, and the in-process simulator's
 * table, which the schema (src/schema.ts) creates where the simulator runs.
 */
export { simulatorMigrations } from './simulator/simulator-store.migrations';
export {
  MAX_REPORT_BYTES,
  REPORT_COLUMNS,
  type TopUpRequest,
  UPSTREAM,
  type UpstreamOutcome,
  type UpstreamProvider,
  UpstreamReportError,
  type UpstreamStatus,
} from './upstream/upstream.port';
