/** What other capabilities use of fulfilment: the upstream, which staff may ask what became of an order. */
export { UPSTREAM, type UpstreamProvider } from './upstream/upstream.port';
