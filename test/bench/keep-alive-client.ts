import net from 'node:net';

/** A reply's status and, when asked for, its body; or why there was none ("ERR:<code>" in the report). */
export type Outcome = { status: number; body?: string } | { error: string };

export interface KeepAliveClientOptions {
  host: string;
  port: number;
  /** Connections at most; a request beyond them waits for one. */
  maxConnections: number;
  /** A request not answered after this long fails with TIMEOUT and its connection is closed. */
  timeoutMs: number;
}

interface Request {
  bytes: Buffer;
  keepBody: (status: number) => boolean;
  resolve: (outcome: Outcome) => void;
}

/**
 * The load generator's HTTP/1.1 client: keep-alive connections, one request
 * at a time on each (no pipelining), each request written with one write and
 * each reply read just far enough to know its status and where it ends
 * (Content-Length or chunked). It shares the machine with the server it
 * measures, and node:http's client, with its agent, request and response
 * objects and header parsing in JavaScript, took about 0.1 ms of CPU a
 * request: a third to a half of a core under a submit load, taken from the
 * server under test.
 */
export class KeepAliveClient {
  private readonly idle: Connection[] = [];
  private readonly waiting: Request[] = [];
  private open = 0;
  private closed = false;

  constructor(private readonly options: KeepAliveClientOptions) {}

  /** POST with the given headers (names as sent) and body; the body of a reply is read only when keepBody says so. */
  post(path: string, headers: Readonly<Record<string, string>>, body: string, keepBody: (status: number) => boolean): Promise<Outcome> {
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.options.host}:${this.options.port}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const bytes = Buffer.from(`${head}\r\n${body}`, 'utf8');
    return new Promise((resolve) => this.dispatch({ bytes, keepBody, resolve }));
  }

  /** Closes every connection; requests still waiting fail with CLOSED. */
  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.destroy();
    for (const request of this.waiting.splice(0)) request.resolve({ error: 'CLOSED' });
  }

  private dispatch(request: Request): void {
    if (this.closed) return request.resolve({ error: 'CLOSED' });
    const connection = this.idle.pop();
    if (connection) return connection.send(request);
    if (this.open < this.options.maxConnections) {
      this.open++;
      return new Connection(this.options, (c, reusable) => this.released(c, reusable)).send(request);
    }
    this.waiting.push(request);
  }

  /** A connection finished a request: it takes the next waiting one, or goes idle, or (closed) makes room for a new one. */
  private released(connection: Connection, reusable: boolean): void {
    if (!reusable || this.closed) {
      // An idle connection the server closed is in the idle list still.
      const at = this.idle.indexOf(connection);
      if (at >= 0) this.idle.splice(at, 1);
      connection.destroy();
      this.open--;
      const next = this.waiting.shift();
      if (next) this.dispatch(next);
      return;
    }
    const next = this.waiting.shift();
    if (next) connection.send(next);
    else this.idle.push(connection);
  }
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection and the reply it is reading. */
class Connection {
  private readonly socket: net.Socket;
  private request?: Request;
  private received: Buffer = Buffer.alloc(0);
  private timer?: NodeJS.Timeout;
  private dead = false;

  constructor(
    private readonly options: KeepAliveClientOptions,
    private readonly onDone: (connection: Connection, reusable: boolean) => void,
  ) {
    this.socket = net.connect({ host: options.host, port: options.port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', (error: NodeJS.ErrnoException) => this.fail(error.code ?? error.message));
    this.socket.on('close', () => this.fail('ECONNRESET'));
  }

  send(request: Request): void {
    this.request = request;
    this.received = Buffer.alloc(0);
    this.timer = setTimeout(() => this.fail('TIMEOUT'), this.options.timeoutMs);
    this.socket.write(request.bytes);
  }

  destroy(): void {
    this.dead = true;
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    if (!this.request) return this.fail('UNEXPECTED_DATA');
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    const reply = parseReply(this.received);
    if (reply === 'incomplete') return;
    if (reply === 'malformed') return this.fail('MALFORMED_REPLY');
    const request = this.request;
    this.finish();
    const body = request.keepBody(reply.status) ? reply.body.toString('utf8') : undefined;
    request.resolve(body === undefined ? { status: reply.status } : { status: reply.status, body });
    this.onDone(this, reply.keepAlive && reply.end === this.received.length);
  }

  private fail(code: string): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    const request = this.request;
    this.finish();
    request?.resolve({ error: code });
    this.onDone(this, false);
  }

  private finish(): void {
    clearTimeout(this.timer);
    this.request = undefined;
  }
}

type Reply = { status: number; body: Buffer; keepAlive: boolean; end: number };

/** A whole reply at the start of `data`, 'incomplete' while more is to come, or 'malformed'. */
export function parseReply(data: Buffer): Reply | 'incomplete' | 'malformed' {
  const headEnd = data.indexOf(HEAD_END);
  if (headEnd < 0) return data.length > 64 * 1024 ? 'malformed' : 'incomplete';
  const lines = data.toString('latin1', 0, headEnd).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]);
  if (!status) return 'malformed';
  let length: number | undefined;
  let chunked = false;
  let keepAlive = lines[0].startsWith('HTTP/1.1');
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) return 'malformed';
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name === 'content-length') {
      if (!/^\d+$/.test(value)) return 'malformed';
      length = Number(value);
    } else if (name === 'transfer-encoding') chunked = value.split(',').some((coding) => coding.trim() === 'chunked');
    else if (name === 'connection') keepAlive = value === 'keep-alive' || (keepAlive && value !== 'close');
  }
  const bodyStart = headEnd + HEAD_END.length;
  const code = Number(status[1]);
  // No body by definition, whatever the headers say.
  if (code === 204 || code === 304 || (code >= 100 && code < 200)) return { status: code, body: Buffer.alloc(0), keepAlive, end: bodyStart };
  if (chunked) return chunkedBody(data, bodyStart, code, keepAlive);
  // Neither: the body runs until the server closes the connection, which this client does not wait for.
  if (length === undefined) return 'malformed';
  if (data.length < bodyStart + length) return 'incomplete';
  return { status: code, body: data.subarray(bodyStart, bodyStart + length), keepAlive, end: bodyStart + length };
}

function chunkedBody(data: Buffer, start: number, status: number, keepAlive: boolean): Reply | 'incomplete' | 'malformed' {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return 'incomplete';
    const size = parseInt(data.toString('latin1', at, lineEnd).split(';')[0].trim(), 16);
    if (!Number.isFinite(size) || size < 0) return 'malformed';
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers (none expected), then the empty line that ends the body.
      const end = data.indexOf('\r\n', at, 'latin1');
      if (end < 0) return 'incomplete';
      if (end !== at) return 'malformed';
      return { status, body: Buffer.concat(parts), keepAlive, end: end + 2 };
    }
    if (data.length < at + size + 2) return 'incomplete';
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}
