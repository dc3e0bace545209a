import { LoggerService } from '@nestjs/common';
import { isDatabaseUnavailable } from '../postgres/database-wait';
import { isEventStoreUnavailable } from '../event-store/store-unavailable';

/**
 * Logs a failed operation. An unreachable database or EventStoreDB is an
 * outage that heals by itself (a restart, a failover, a leader election):
 * one warning line, no stack. Anything else
 * is a fault to trace, logged with its stack. `fields` ties the line to a request.
 */
export function logFailure(logger: LoggerService, message: string, error: unknown, fields: { request_id?: string } = {}): void {
  const line = (text: string) => (fields.request_id === undefined ? text : { message: text, ...fields });
  if (isDatabaseUnavailable(error)) logger.warn(line(`${message}: database unavailable (${(error as Error).message})`));
  else if (isEventStoreUnavailable(error)) logger.warn(line(`${message}: EventStoreDB unavailable (${(error as Error).message})`));
  else logger.error(line(message), error instanceof Error ? error.stack : String(error));
}
