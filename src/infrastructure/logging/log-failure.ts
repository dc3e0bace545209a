import { LoggerService } from '@nestjs/common';
import { isDatabaseUnavailable } from '../postgres/connection';

/**
 * Logs a failed operation. An unreachable database is an outage that heals by
 * itself (a restart, a failover): one warning line, no stack. Anything else
 * is a fault to trace, logged with its stack.
 */
export function logFailure(logger: LoggerService, message: string, error: unknown): void {
  if (isDatabaseUnavailable(error)) logger.warn(`${message}: database unavailable (${(error as Error).message})`);
  else logger.error(message, error instanceof Error ? error.stack : String(error));
}
