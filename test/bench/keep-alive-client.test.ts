import http from 'node:http';
import { AddressInfo } from 'node:net';
import { KeepAliveClient, parseReply } from './keep-alive-client';

describe("npm run bench: the load generator's HTTP client reads a reply", () => {
  const reply = (text: string) => parseReply(Buffer.from(text, 'latin1'));

  it('to the end its Content-Length gives, with its status and whether the connection stays open', () => {
    const accepted = 'HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\n{}';
    expect(reply(accepted)).toEqual({ status: 202, body: Buffer.from('{}'), keepAlive: true, end: accepted.length });
    // What follows the reply is not part of it: the caller sees it did not end at the data's end.
    expect(reply(`${accepted}HTTP/1.1`)).toMatchObject({ end: accepted.length });
    expect(reply('HTTP/1.1 400 Bad Request\r\ncontent-length: 3\r\nConnection: close\r\n\r\nbad')).toMatchObject({ status: 400, keepAlive: false });
    expect(reply('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')).toMatchObject({ status: 200, keepAlive: false });
    expect(reply('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')).toMatchObject({ keepAlive: true });
  });

  it('in chunks, to the last chunk', () => {
    const chunked = 'HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\n\r\n';
    const parsed = reply(chunked);
    expect(parsed).toMatchObject({ status: 500, end: chunked.length });
    expect((parsed as { body: Buffer }).body.toString()).toBe('abcdefg');
  });

  it('as incomplete until all of it is in', () => {
    expect(reply('HTTP/1.1 202 Accepted\r\nContent-Length: 10\r\n')).toBe('incomplete');
    expect(reply('HTTP/1.1 202 Accepted\r\nContent-Length: 10\r\n\r\n{"a":')).toBe('incomplete');
    expect(reply('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n')).toBe('incomplete');
    expect(reply('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n')).toBe('incomplete');
  });

  it('as malformed when it is not HTTP or its end cannot be known', () => {
    expect(reply('SSH-2.0-OpenSSH\r\n\r\n')).toBe('malformed');
    expect(reply('HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n')).toBe('malformed');
    expect(reply('HTTP/1.1 200 OK\r\n\r\nuntil the connection closes')).toBe('malformed');
    expect(reply('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')).toBe('malformed');
  });
});

describe("npm run bench: the load generator's HTTP client against a node:http server", () => {
  let server: http.Server;
  let port: number;
  /** The connections the server has seen, and the requests in each. */
  const connections = new Map<object, number>();
  let handler: (request: http.IncomingMessage, response: http.ServerResponse, body: string) => void;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      connections.set(request.socket, (connections.get(request.socket) ?? 0) + 1);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => handler(request, response, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => connections.clear());

  const client = (maxConnections: number, timeoutMs = 5000) => new KeepAliveClient({ host: '127.0.0.1', port, maxConnections, timeoutMs });
  const keepRefusals = (status: number) => status !== 202;

  it('sends the headers and body as given, reuses its connections, and never opens more than it may', async () => {
    const seen: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    handler = (request, response, body) => {
      seen.push({ headers: request.headers, body });
      // A refusal through node:http's chunked encoding, an acceptance with a length.
      if (body.includes('refuse')) {
        response.writeHead(402, { 'content-type': 'application/json' }).write('{"code":');
        response.end('"INSUFFICIENT_BALANCE"}');
      } else setTimeout(() => response.writeHead(202, { 'content-length': '2' }).end('{}'), 5);
    };
    const c = client(3);
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        c.post('/api/v2/topup/submit', { 'x-api-key': `key-${i}` }, i === 7 ? '{"refuse":true}' : `{"n":${i}}`, keepRefusals),
      ),
    );
    c.close();

    expect(outcomes.filter((o) => 'status' in o && o.status === 202)).toHaveLength(29);
    expect(outcomes[7]).toEqual({ status: 402, body: '{"code":"INSUFFICIENT_BALANCE"}' });
    expect(outcomes[0]).toEqual({ status: 202 });
    expect(connections.size).toBe(3);
    expect([...connections.values()].reduce((a, b) => a + b, 0)).toBe(30);
    const third = seen.find((s) => s.body === '{"n":3}')!;
    expect(third.headers['x-api-key']).toBe('key-3');
    expect(third.headers['content-length']).toBe('7');
  });

  it('opens a new connection after a reply that closes its own', async () => {
    handler = (_request, response) => response.writeHead(202, { connection: 'close', 'content-length': '0' }).end();
    const c = client(1);
    for (let i = 0; i < 3; i++) expect(await c.post('/', {}, '{}', keepRefusals)).toEqual({ status: 202 });
    c.close();
    expect(connections.size).toBe(3);
  });

  it('fails a request whose connection the server drops, and one it does not answer in time, and goes on', async () => {
    handler = (request, response, body) => {
      if (body === 'drop') request.socket.destroy();
      else if (body !== 'hang') response.writeHead(202, { 'content-length': '0' }).end();
    };
    const c = client(1, 300);
    expect(await c.post('/', {}, 'drop', keepRefusals)).toEqual({ error: 'ECONNRESET' });
    expect(await c.post('/', {}, 'hang', keepRefusals)).toEqual({ error: 'TIMEOUT' });
    expect(await c.post('/', {}, 'fine', keepRefusals)).toEqual({ status: 202 });
    c.close();
    expect(connections.size).toBe(3);
  });

  it('fails to connect with the error code', async () => {
    const closed = new KeepAliveClient({ host: '127.0.0.1', port: 1, maxConnections: 1, timeoutMs: 1000 });
    expect(await closed.post('/', {}, '{}', keepRefusals)).toEqual({ error: 'ECONNREFUSED' });
    closed.close();
  });
});
