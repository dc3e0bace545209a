/** The fulfilment capability's public API: the upstream provider, which reconciliation asks about an order's fate. */
export { type TopUpRequest, UPSTREAM, type UpstreamOutcome, type UpstreamProvider, type UpstreamStatus } from './upstream/upstream.port';
