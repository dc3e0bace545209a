import { prettyFactory } from 'pino-pretty';
import type { WriteStream } from 'node:tty';
import { LogDestination, streamOf, wantsColour } from './log-destination';
import { LogStream } from './log-lines';

/**
 * LOG_FORMAT=pretty: each line pino wrote, made readable by pino-pretty in
 * this thread before it leaves as the JSON line would (log-destination.ts),
 * so that the order of the lines and what reaches the stream before an exit
 * stay the same in both formats. One line per event:
 * `12:04:05.123 INFO: [Access] [request id] POST /api/v2/balance 200 {"method":"POST",...}`,
 * an error's stack on the lines after it. Colours only on a terminal.
 */
export class PrettyDestination extends LogDestination {
  private readonly prettify: Record<LogStream, (line: string) => string>;

  constructor(streams: Record<LogStream, Pick<WriteStream, 'isTTY'>> = process) {
    super();
    const on = (stream: Pick<WriteStream, 'isTTY'>) =>
      prettyFactory({
        colorize: wantsColour(stream),
        singleLine: true,
        messageKey: 'message',
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,context,request_id,stack',
        messageFormat: '{if context}[{context}] {end}{if request_id}[{request_id}] {end}{message}',
      });
    this.prettify = { stdout: on(streams.stdout), stderr: on(streams.stderr) };
  }

  override write(line: string): void {
    const stream = streamOf(this.lastLevel);
    const stack = this.lastObj.stack;
    this.send(this.prettify[stream](line) + (typeof stack === 'string' ? `${stack.replace(/^/gm, '    ')}\n` : ''));
  }
}
