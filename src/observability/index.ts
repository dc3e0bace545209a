/**
 * The observability capability's public API beyond its module: the server's
 * real address, which start-up logs, the projections' lag behind the log,
 * which the operations dashboard shows as the metrics report it, and the
 * running instances with their upstream slots, which the status page lists.
 */
export { listeningAddress } from './listening-address';
export { projectionLags } from './projection-lag';
export type { ProjectionLag } from './projection-lag';
export { instanceMigrations } from './instances/instances.migrations';
export { liveInstances } from './instances/live-instances';
export type { LiveInstance } from './instances/live-instances';
