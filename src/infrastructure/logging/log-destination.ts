import type { WriteStream } from 'node:tty';
import { logLines, LogStream } from './log-lines';

/** pino's numeric levels. */
export const WARN = 40;
export const ERROR = 50;

/** pino fills in lastLevel and lastObj before each write to a stream that sets this symbol. */
const NEEDS_METADATA = Symbol.for('pino.metadata');

/**
 * Where pino's lines go: routine ones (below warn) wait for the end of the
 * event-loop turn with the others of that turn (log-lines.ts); a warning is
 * written at once on stdout, an error or a fatal line at once on stderr, so
 * the last words before a crash are written before the process can exit.
 * Both writes are synchronous: on Linux process.stdout and process.stderr
 * write to files, pipes and terminals synchronously.
 */
export class LogDestination {
  readonly [NEEDS_METADATA] = true;
  lastLevel = 0;
  lastObj: Record<string, unknown> = {};

  write(line: string): void {
    this.send(line);
  }

  /** Not `emit`: pino calls a destination's emit("message", ...) when it has one. */
  protected send(text: string): void {
    if (this.lastLevel < WARN) logLines.later(text);
    else logLines.now(streamOf(this.lastLevel), text);
  }
}

export function streamOf(level: number): LogStream {
  return level >= ERROR ? 'stderr' : 'stdout';
}

/** Colours only for a terminal that has not asked for none (https://no-color.org): a file or a pipe gets plain text. */
export function wantsColour(stream: Pick<WriteStream, 'isTTY'>, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}
