/** The observability capability's public API beyond its module: the server's real address, which start-up logs. */
export { listeningAddress } from './listening-address';
