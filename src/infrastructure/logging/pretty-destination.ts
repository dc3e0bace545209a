import type { WriteStream } from 'node:tty';
import { LogDestination, streamOf, wantsColour } from './log-destination';
import { LogStream } from './log-lines';

/** The keys a pretty line shows in its own places; the others follow the message as key=value. */
const PLACED = new Set(['level', 'time', 'pid', 'context', 'request_id', 'message', 'stack']);

const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
const YELLOW = '\x1b[33m';
const LEVEL_COLOURS: Record<string, string> = {
  trace: '\x1b[90m',
  debug: '\x1b[34m',
  info: '\x1b[32m',
  warn: '\x1b[33m',
  error: '\x1b[31m',
  fatal: '\x1b[41m',
};

type Line = Record<string, unknown>;

/**
 * LOG_FORMAT=pretty: each line pino wrote as JSON, retold for a terminal
 * before it leaves as the JSON line would (log-destination.ts), so that the
 * order of the lines, the streams and what is written before an exit stay the
 * same in both formats. One line per event, an error's stack on the lines
 * after it:
 *
 *   11:52:30.473 INFO  [Access] [2642aafa-...] POST /api/v2/topup/submit 202 route=/api/v2/topup/submit status=202
 *
 * Colours only for a terminal. Written here rather than with pino-pretty: an
 * access line cost 21-27 µs of CPU in pino-pretty 13 (its message template,
 * a deep copy of each line, date formatting), 2.6 µs here, and the
 * benchmark's service logs in this format.
 */
export class PrettyDestination extends LogDestination {
  private readonly colour: Record<LogStream, boolean>;
  /** The local time's "HH:MM:SS." of the last second seen, by its ISO "YYYY-MM-DDTHH:MM:SS". */
  private clock = { isoSecond: '', local: '' };

  constructor(streams: Record<LogStream, Pick<WriteStream, 'isTTY'>> = process) {
    super();
    this.colour = { stdout: wantsColour(streams.stdout), stderr: wantsColour(streams.stderr) };
  }

  override write(line: string): void {
    this.send(this.prettify(JSON.parse(line) as Line, this.colour[streamOf(this.lastLevel)]));
  }

  private prettify(log: Line, colour: boolean): string {
    const level = String(log.level);
    const paint = (code: string | undefined, text: string) => (colour && code ? `${code}${text}${RESET}` : text);
    let text = `${paint(DIM, this.localTime(String(log.time)))} ${paint(LEVEL_COLOURS[level], level.toUpperCase().padEnd(5))}`;
    if (log.context !== undefined) text += ` ${paint(YELLOW, `[${String(log.context)}]`)}`;
    if (log.request_id !== undefined) text += ` [${String(log.request_id)}]`;
    text += ` ${typeof log.message === 'string' ? log.message : JSON.stringify(log.message)}`;
    for (const key in log) if (!PLACED.has(key)) text += ` ${key}=${shown(log[key])}`;
    text += '\n';
    if (typeof log.stack === 'string') text += `${log.stack.replace(/^/gm, '    ')}\n`;
    return text;
  }

  /** HH:MM:SS.mmm in the machine's time zone, from the line's ISO time. */
  private localTime(iso: string): string {
    const isoSecond = iso.slice(0, 19);
    if (isoSecond !== this.clock.isoSecond) {
      const at = new Date(iso);
      const two = (n: number) => String(n).padStart(2, '0');
      this.clock = { isoSecond, local: `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.` };
    }
    return this.clock.local + iso.slice(20, 23);
  }
}

/** A value as key=value shows it: a plain word bare, anything else as JSON, so that spaces and quotes cannot blur the pairs. */
function shown(value: unknown): string {
  return typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}
