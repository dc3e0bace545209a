/**
 * EventStoreDB's client errors that mean "no node answered in time" or "ask
 * another node" (its ErrorType values): the server restarting, a leader
 * election, a node that lost leadership, a call cut by its deadline or
 * cancelled by the server. The client reconnects on its own (to the new
 * leader when the connection string uses discovery), so these heal by
 * themselves, as a Postgres failover does.
 */
const TRANSIENT_TYPES = new Set(['unavailable', 'not-leader', 'deadline-exceeded', 'cancelled', 'timeout']);

/** gRPC status codes of a call that never got an answer: CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE. */
const TRANSIENT_GRPC_CODES = new Set([1, 4, 14]);

/**
 * Whether an error means EventStoreDB could not be reached or asked for
 * another node, as opposed to a fault in what was asked of it (a wrong
 * expected revision, access denied, a stream deleted). Decided by the
 * error's fields, without loading the client.
 */
export function isEventStoreUnavailable(error: unknown): boolean {
  const { type, code, metadata, message } = (error ?? {}) as { type?: unknown; code?: unknown; metadata?: unknown; message?: unknown };
  if (typeof type === 'string') return TRANSIENT_TYPES.has(type);
  // A raw gRPC ServiceError that the client did not convert (it carries metadata).
  if (typeof code === 'number' && metadata !== undefined && TRANSIENT_GRPC_CODES.has(code)) return true;
  // The client's discovery of a cluster (esdb+discover://) found no node to talk to.
  return typeof message === 'string' && /^Failed to discover after \d+ attempts\.$/.test(message);
}
