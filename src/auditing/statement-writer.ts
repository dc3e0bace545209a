import { Writable } from 'node:stream';
import { STATEMENT_CSV_HEADER, statementCsvRow, StatementLine, StatementStream } from './wallet-statement';

export type StatementFormat = 'json' | 'csv';

/** Takes a chunk of output; resolves when more may be written. */
export type Sink = (chunk: string) => Promise<void>;

/** Output is handed to the sink in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes a statement as it is read: JSON (the statement document, or inside
 * the API's success envelope) or CSV. Lines are written in chunks and each
 * chunk waits for the sink, so a slow reader slows the replay down instead
 * of letting output pile up in memory. Returns the number of lines written.
 */
export async function writeStatement(sink: Sink, format: StatementFormat, statement: StatementStream, { envelope = false } = {}): Promise<number> {
  let buffer = '';
  const write = async (text: string) => {
    buffer += text;
    if (buffer.length < CHUNK_CHARS) return;
    const chunk = buffer;
    buffer = '';
    await sink(chunk);
  };
  const line: (l: StatementLine, index: number) => string =
    format === 'csv' ? statementCsvRow : (l, index) => `${index === 0 ? '' : ','}\n${JSON.stringify(l)}`;

  if (format === 'csv') {
    await write(STATEMENT_CSV_HEADER);
  } else {
    const { merchant_id, currency } = statement;
    await write(`${envelope ? '{"success":true,"code":"OK","data":' : ''}${JSON.stringify({ merchant_id, currency }).slice(0, -1)},"lines":[`);
  }
  let written = 0;
  for await (const l of statement.lines) await write(line(l, written++));
  if (format === 'json')
    await write(`${written === 0 ? '' : '\n'}],"next_after_revision":${JSON.stringify(statement.next_after_revision)}}${envelope ? '}' : '\n'}`);
  if (buffer.length > 0) await sink(buffer);
  return written;
}

export class OutputClosedError extends Error {
  constructor() {
    super('the output was closed before the statement was written');
    this.name = 'OutputClosedError';
  }
}

/** A sink onto a stream (an HTTP response, a file, stdout) that waits for 'drain' when the stream is full. */
export function writableSink(stream: Writable): Sink {
  return (chunk) =>
    new Promise<void>((resolve, reject) => {
      if (stream.destroyed || stream.writableEnded) return reject(new OutputClosedError());
      if (stream.write(chunk)) return resolve();
      const settle = (error?: Error) => {
        stream.off('drain', onDrain).off('close', onClose).off('error', settle);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => settle();
      const onClose = () => settle(new OutputClosedError());
      stream.on('drain', onDrain).on('close', onClose).on('error', settle);
    });
}
