/**
 * The observability capability's public API beyond its module: the server's
 * real address, which start-up logs, and the projections' lag behind the log,
 * which the operations dashboard shows as the metrics report it.
 */
export { listeningAddress } from './listening-address';
export { projectionLags } from './projection-lag';
export type { ProjectionLag } from './projection-lag';
