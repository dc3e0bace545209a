import { ConsoleLogger, LogLevel } from '@nestjs/common';
import { logLines, LogStream } from './log-lines';

export type LogFormat = 'json' | 'pretty';

/**
 * A message with fields: JSON lines get the fields as keys, pretty lines as
 * key=value after the message. `request_id` ties a line to its request.
 */
export interface LogFields {
  message: string;
  request_id?: string;
  [field: string]: unknown;
}

const LEVELS: LogLevel[] = ['log', 'warn', 'error', 'fatal'];

type JsonLine = { level: LogLevel; pid: number; timestamp: number; message: unknown };

/**
 * Nest's console logger in one of two formats: `json` writes one JSON object
 * per line (for a log pipeline), `pretty` Nest's coloured text, for a
 * terminal. A message may be LogFields, whose fields become keys of the line.
 * Routine lines leave with the others of their event-loop turn (log-lines.ts).
 */
export class AppLogger extends ConsoleLogger {
  private stamp = { second: NaN, text: '' };

  constructor(format: LogFormat) {
    super({ json: format === 'json', logLevels: LEVELS });
  }

  /** Nest's pretty timestamp shows whole seconds: formatted once a second, not once a line (Intl formatting is slow). */
  protected override getTimestamp(): string {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.stamp.second) this.stamp = { second, text: super.getTimestamp() };
    return this.stamp.text;
  }

  /** Nest's own formatting, each line handed to logLines instead of written to the stream on its own. */
  protected override printMessages(messages: unknown[], context = '', logLevel: LogLevel = 'log', writeStreamType?: LogStream, errorStack?: unknown): void {
    const stream = writeStreamType ?? 'stdout';
    for (const message of messages) {
      const line = this.options.json
        ? `${this.stringifyJsonLogObject(this.getJsonLogObject(message, { context, logLevel, writeStreamType, errorStack }))}\n`
        : this.formatMessage(
            logLevel,
            message,
            this.formatPid(process.pid),
            logLevel.toUpperCase().padStart(7, ' '),
            this.formatContext(context),
            this.updateAndGetTimestampDiff(),
          );
      if (logLevel === 'log' && stream === 'stdout') logLines.later(line);
      else logLines.now(stream, line);
    }
  }

  protected override getJsonLogObject(
    message: unknown,
    options: { context: string; logLevel: LogLevel; writeStreamType?: 'stdout' | 'stderr'; errorStack?: unknown },
  ): JsonLine {
    const line: Record<string, unknown> = { time: new Date().toISOString(), level: options.logLevel, pid: process.pid };
    if (options.context) line.context = options.context;
    if (isFields(message)) Object.assign(line, message);
    else line.message = message;
    if (options.errorStack) line.stack = options.errorStack;
    // An ISO time under "time" instead of Nest's epoch "timestamp": what log pipelines parse.
    return line as unknown as JsonLine;
  }

  /** Plain JSON.stringify: the access line is written for every request, and Nest's size-guarding replacer walks every key. */
  protected override stringifyJsonLogObject(logObject: Record<string, unknown>): string {
    return JSON.stringify(logObject, (_, value: unknown) =>
      typeof value === 'bigint' ? value.toString() : value instanceof Error ? (value.stack ?? value.message) : value,
    );
  }

  protected override formatMessage(
    logLevel: LogLevel,
    message: unknown,
    pidMessage: string,
    formattedLogLevel: string,
    contextMessage: string,
    timestampDiff: string,
  ): string {
    if (!isFields(message)) return super.formatMessage(logLevel, message, pidMessage, formattedLogLevel, contextMessage, timestampDiff);
    const { message: text, request_id: requestId, ...fields } = message;
    const context = requestId ? `${contextMessage}[${requestId}] ` : contextMessage;
    return super.formatMessage(logLevel, prettyFields(text, fields), pidMessage, formattedLogLevel, context, timestampDiff);
  }
}

function isFields(message: unknown): message is LogFields {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && typeof (message as LogFields).message === 'string';
}

function prettyFields(message: string, fields: Record<string, unknown>): string {
  const pairs = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return pairs.length === 0 ? message : `${message} ${pairs.join(' ')}`;
}
