import { connect, Socket } from 'node:net';

export interface RawReply {
  /** Everything the server wrote, as latin1 text. */
  raw: string;
  /** "HTTP/1.1 400 Bad Request", or '' when nothing came back. */
  statusLine: string;
  status?: number;
  headers: Record<string, string>;
  body: string;
  /** The server ended the connection (FIN or reset) before the wait ran out. */
  closedByServer: boolean;
  /** From the last byte written to the end of the connection, or to the end of the wait. */
  ms: number;
}

export interface RawOptions {
  /** How long to wait for the server to close the connection. */
  waitMs?: number;
  /** Half-close after writing: the client sends no more bytes but still reads. */
  endAfterWrite?: boolean;
  /** Called with the open socket after the bytes are written. */
  onWritten?: (socket: Socket) => void;
}

/**
 * Writes bytes exactly as given on a fresh TCP connection and reads until the
 * server closes it: for requests no HTTP client would send. An array is
 * written part by part, 50 ms apart.
 */
export function rawExchange(url: string, payload: string | Buffer | Array<string | Buffer>, options: RawOptions = {}): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  const chunks = Array.isArray(payload) ? payload : [payload];
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let writtenAt = Date.now();
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseReply(Buffer.concat(received).toString('latin1')), closedByServer, ms: Date.now() - writtenAt });
    };
    const timer = setTimeout(() => finish(false), options.waitMs ?? 5000);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // A reset after the reply is still a close; what was read before it is kept.
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      for (const [i, chunk] of chunks.entries()) {
        // Apart, so the server sees each part on its own (the headers before a bad body, say).
        if (i > 0) await new Promise((r) => setTimeout(r, 50));
        if (!socket.writable) break;
        socket.write(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
      }
      writtenAt = Date.now();
      if (options.endAfterWrite) socket.end();
      options.onWritten?.(socket);
    });
  });
}

function parseReply(raw: string): Omit<RawReply, 'closedByServer' | 'ms'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { raw, statusLine: raw.split('\r\n')[0], headers: {}, body: '' };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let body = raw.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]) || undefined;
  return { raw, statusLine, status, headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}

function unchunk(text: string): string {
  let out = '';
  for (let at = 0; ;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!(size > 0)) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
