import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Names this process in job leases and attempt logs: host, pid and a random tag. */
export function instanceId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}
