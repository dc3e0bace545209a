import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Level, Logger as Pino } from 'pino';
import type { LogLevelName } from '../../config/config';
import { LogDestination } from './log-destination';
import { PrettyDestination } from './pretty-destination';
import { currentRequest } from './request-context';

export type LogFormat = 'json' | 'pretty';

/**
 * A message with fields: JSON lines get the fields as keys, pretty lines
 * after the message. `request_id` ties a line to its request; lines logged
 * while a request is served get it without being told (request-context.ts).
 */
export interface LogFields {
  message: string;
  request_id?: string;
  [field: string]: unknown;
}

export interface LoggerOptions {
  format: LogFormat;
  level?: LogLevelName;
  /** Where the lines go; by default stdout, and stderr for errors (log-destination.ts). */
  destination?: DestinationStream;
}

/**
 * Nest's start-up wiring, a line per module and per route (about 80): at
 * debug, so that the first lines of a start are the ones that say something.
 */
const WIRING_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** The pino logger every line goes through: one JSON object per line, under the names the operators' docs use. */
export function createPino({ format, level = 'info', destination }: LoggerOptions): Pino {
  return pino(
    {
      level,
      messageKey: 'message',
      base: { pid: process.pid },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? (format === 'pretty' ? new PrettyDestination() : new LogDestination()),
  );
}

let stamp = { second: NaN, prefix: '' };

/**
 * pino's `"time"` as an ISO 8601 UTC timestamp, the date and time formatted
 * once a second and the milliseconds added to it: every request writes an
 * access line, and a Date's toISOString per line was 4 % of the CPU of
 * `npm run bench:access-log` (test/bench/access-log-bench.ts).
 */
export function isoTime(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== stamp.second) stamp = { second, prefix: `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}` };
  const ms = now - second * 1000;
  return `${stamp.prefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

/**
 * Nest's LoggerService on pino: `new Logger('X')` anywhere in the service,
 * and Nest's own lines, become pino lines with `context: "X"`. Nest's `log`
 * is pino's `info`, `verbose` its `trace`. An error's stack is in `stack`.
 */
export class AppLogger implements LoggerService {
  private readonly pino: Pino;
  /** A child logger per context: pino writes its bindings once, not per line. */
  private readonly contexts = new Map<string, Pino>();

  constructor(options: LoggerOptions | LogFormat) {
    this.pino = createPino(typeof options === 'string' ? { format: options } : options);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /**
   * Nest passes `(message, stack?, context?)`, a lone string after the
   * message being the stack when it reads like one, else the context
   * (Nest's ConsoleLogger decides the same way); an Error may stand for either.
   */
  error(message: unknown, ...params: unknown[]): void {
    let context: unknown;
    let stack: unknown;
    if (params.length >= 2) [stack, context] = params;
    else if (params.length === 1) {
      if (typeof params[0] === 'string' && !looksLikeStack(params[0])) context = params[0];
      else stack = params[0];
    }
    const logger = this.logger(context);
    if (!logger.isLevelEnabled('error')) return;
    const [fields, text] = lineOf(message, stackOf(stack));
    logger.error(fields, text);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? params[params.length - 1] : undefined;
    if (level === 'info' && WIRING_CONTEXTS.has(context as string)) level = 'debug';
    const logger = this.logger(context);
    if (!logger.isLevelEnabled(level)) return;
    const [fields, text] = lineOf(message);
    logger[level](fields, text);
  }

  private logger(context: unknown): Pino {
    if (typeof context !== 'string' || context === '') return this.pino;
    let logger = this.contexts.get(context);
    if (!logger) {
      logger = this.pino.child({ context });
      this.contexts.set(context, logger);
    }
    return logger;
  }
}

/**
 * pino's arguments for one line: the fields (with the id of the request being
 * served, if any), then the message when it is not among the fields. A line
 * that has all it needs (the access line) goes as it is, uncopied.
 */
function lineOf(message: unknown, stack?: string): [Record<string, unknown>, string | undefined] {
  const requestId = currentRequest()?.requestId;
  if (isFields(message)) {
    if (stack === undefined && (message.request_id !== undefined || requestId === undefined)) return [message, undefined];
    return [{ request_id: requestId, ...message, stack: stack ?? message.stack }, undefined];
  }
  if (message instanceof Error) return [{ request_id: requestId, stack: stack ?? message.stack }, message.message];
  // Anything else as Nest would print it: a string as it is, an object as JSON.
  return [{ request_id: requestId, stack }, message as string];
}

function isFields(message: unknown): message is LogFields {
  return typeof message === 'object' && message !== null && !(message instanceof Error) && typeof (message as LogFields).message === 'string';
}

function looksLikeStack(text: string): boolean {
  return /\n\s+at /.test(text);
}

function stackOf(value: unknown): string | undefined {
  if (value instanceof Error) return value.stack ?? value.message;
  return typeof value === 'string' ? value : value === undefined ? undefined : String(value);
}
