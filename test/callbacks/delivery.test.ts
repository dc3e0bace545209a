import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, createServer as createNetServer, Socket } from 'node:net';
import { isAcknowledged } from '../../src/callbacks/delivery/acknowledgement';
import { isForbiddenAddress, refusedCallbackHost } from '../../src/callbacks/delivery/address-policy';
import { CallbackConnections } from '../../src/callbacks/delivery/callback-connections';
import { ResolvedAddress, sendCallback, SendCallbackOptions } from '../../src/callbacks/delivery/callback-sender';

/**
 * The sending side of merchant callbacks (contract §2) against real local HTTP
 * servers. Traffic only ever goes to 127.0.0.1: every other address in here is
 * refused before a socket exists, which the connect spy below checks.
 */

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface LocalServer {
  port: number;
  received: Received[];
  url: (path?: string) => string;
  close: () => Promise<void>;
}

async function startServer(handler: Handler): Promise<LocalServer> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    url: (path = '/callback') => `http://127.0.0.1:${port}${path}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const reply =
  (status: number, body: string | Buffer, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };

const send = (overrides: Partial<SendCallbackOptions> & { url: string }) =>
  sendCallback({ headers: {}, body: '{"order_no":"T1"}', timeoutMs: 5_000, allowPrivateNetworks: true, ...overrides });

const lookupTo = (...addresses: string[]) =>
  jest.fn(async (_hostname: string): Promise<ResolvedAddress[]> => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

let servers: LocalServer[] = [];
const serve = async (handler: Handler) => {
  const server = await startServer(handler);
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe('acknowledgement through a real exchange', () => {
  it.each<[string, number, string | Buffer, boolean]>([
    ['success', 200, 'success', true],
    ['ok', 200, 'ok', true],
    ['{"success":true}', 200, '{"success":true}', true],
    ['{"success": true, "extra": 1}', 200, '{"success": true, "extra": 1}', true],
    ['success on a 201', 201, 'success', true],
    ['{"success":"true"}', 200, '{"success":"true"}', false],
    ['SUCCESS', 200, 'SUCCESS', false],
    ['success\\n', 200, 'success\n', false],
    [' success', 200, ' success', false],
    ['OK', 200, 'OK', false],
    ['empty 204', 204, '', false],
    ['empty 200', 200, '', false],
    ['[true]', 200, '[true]', false],
    ['{"success":1}', 200, '{"success":1}', false],
    ['{"success":false}', 200, '{"success":false}', false],
    ['a 302 with body success', 302, 'success', false],
    ['a 500 with body success', 500, 'success', false],
  ])('%s (HTTP %i, body %j) -> acknowledged: %s', async (_name, status, body, acknowledged) => {
    const server = await serve(reply(status, body));
    const result = await send({ url: server.url() });
    expect(result).toMatchObject({ acknowledged, statusCode: status, error: null });
    expect(server.received).toHaveLength(1);
  });

  it('posts the body with the given headers, Content-Type and Content-Length', async () => {
    const server = await serve(reply(200, 'ok'));
    const body = '{"order_no":"T1","amount":"1.00","note":"é"}';
    await send({ url: server.url('/cb?x=1'), body, headers: { 'X-Signature': 'abc', 'Content-Type': 'text/plain' } });
    expect(server.received[0]).toMatchObject({ method: 'POST', url: '/cb?x=1', body });
    expect(server.received[0].headers).toMatchObject({
      'x-signature': 'abc',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    });
  });

  it('reads up to 64 KiB: an exactly 64 KiB acknowledgement counts, one byte more does not', async () => {
    const padded = (size: number) => '{"success":true}'.padEnd(size, ' ');
    const fits = await serve(reply(200, padded(64 * 1024)));
    expect(await send({ url: fits.url() })).toMatchObject({ acknowledged: true, error: null });
    const tooBig = await serve(reply(200, padded(64 * 1024 + 1)));
    const result = await send({ url: tooBig.url() });
    expect(result).toMatchObject({ acknowledged: false, statusCode: 200, error: expect.stringMatching(/exceeds 65536 bytes/) });
  });
});

describe('isAcknowledged', () => {
  it.each<[number, string, boolean]>([
    [199, 'success', false],
    [200, 'success', true],
    [299, 'ok', true],
    [300, 'ok', false],
    [200, '{"success":true,"success":false}', false], // JSON.parse keeps the last duplicate
    [200, 'null', false],
    [200, '{"success":null}', false],
    [200, '\uFEFF{"success":true}', false],
    [200, 'ok ', false],
  ])('%i %j -> %s', (status, body, expected) => {
    expect(isAcknowledged(status, Buffer.from(body))).toBe(expected);
  });

  it('refuses JSON that is not valid UTF-8', () => {
    expect(isAcknowledged(200, Buffer.concat([Buffer.from('{"success":true,"x":"'), Buffer.from([0xff]), Buffer.from('"}')]))).toBe(false);
  });
});

describe('failures become results', () => {
  it('times out when the server never answers, after at least timeoutMs', async () => {
    const server = await serve(() => undefined);
    const result = await send({ url: server.url(), timeoutMs: 300 });
    expect(result).toMatchObject({ acknowledged: false, statusCode: null, error: 'timed out after 300 ms' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(300);
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('bounds the whole exchange, reading the body included', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Length': '7' });
      res.write('succ'); // and never the rest
    });
    const result = await send({ url: server.url(), timeoutMs: 300 });
    expect(result).toMatchObject({ acknowledged: false, statusCode: 200, replyExcerpt: 'succ', error: 'timed out after 300 ms' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(300);
  });

  it('bounds name resolution too', async () => {
    const result = await send({ url: 'http://slow.example/', timeoutMs: 200, lookup: () => new Promise(() => undefined) });
    expect(result).toMatchObject({ acknowledged: false, error: 'timed out after 200 ms' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(200);
  });

  it('does not follow a redirect', async () => {
    const target = await serve(reply(200, 'success'));
    const server = await serve(reply(302, 'success', { Location: target.url() }));
    const result = await send({ url: server.url() });
    expect(result).toMatchObject({ acknowledged: false, statusCode: 302, error: null });
    expect(target.received).toHaveLength(0);
  });

  it('reports a refused connection', async () => {
    const closed = await startServer(reply(200, 'ok'));
    await closed.close();
    const result = await send({ url: closed.url() });
    expect(result).toMatchObject({ acknowledged: false, statusCode: null, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('reports a connection closed mid-reply', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('success', () => req.socket.destroy());
    });
    expect(await send({ url: server.url() })).toMatchObject({ acknowledged: false, statusCode: 200, error: expect.any(String) });
  });

  it('reports a failing lookup and a header it cannot send', async () => {
    const failing = await send({ url: 'http://nowhere.example/', lookup: () => Promise.reject(new Error('ENOTFOUND')) });
    expect(failing).toMatchObject({ acknowledged: false, error: 'cannot resolve nowhere.example: ENOTFOUND' });
    const server = await serve(reply(200, 'ok'));
    const badHeader = await send({ url: server.url(), headers: { 'X-Bad': 'a\r\nInjected: 1' } });
    expect(badHeader).toMatchObject({ acknowledged: false, error: expect.any(String) });
    expect(server.received).toHaveLength(0);
  });
});

describe('reply excerpt', () => {
  it.each<[string, Buffer, string]>([
    ['at most 200 bytes', Buffer.from('a'.repeat(1_000)), 'a'.repeat(200)],
    ['a character cut at the boundary is dropped', Buffer.from(`${'a'.repeat(199)}€`), 'a'.repeat(199)],
    ['invalid bytes are replaced', Buffer.from([0x6f, 0xff, 0x6b]), 'o\uFFFDk'],
    ['NUL is replaced', Buffer.from([0x6f, 0x00, 0x6b]), 'o\uFFFDk'],
  ])('%s', async (_name, body, excerpt) => {
    const server = await serve(reply(200, body));
    const result = await send({ url: server.url() });
    expect(result.replyExcerpt).toBe(excerpt);
    expect(Buffer.byteLength(result.replyExcerpt)).toBeLessThanOrEqual(200);
  });
});

describe('address pinning', () => {
  it('connects to the address the lookup vetted, with the hostname in Host', async () => {
    const server = await serve(reply(200, 'success'));
    // merchant.example has no real DNS answer: the request can only arrive if the vetted address is the one used.
    const lookup = lookupTo('127.0.0.1');
    const result = await send({ url: `http://merchant.example:${server.port}/cb`, lookup });
    expect(result).toMatchObject({ acknowledged: true, statusCode: 200, error: null });
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(lookup).toHaveBeenCalledWith('merchant.example');
    expect(server.received).toHaveLength(1);
    expect(server.received[0].headers.host).toBe(`merchant.example:${server.port}`);
  });

  it('over https, connects to the vetted address and names the host in SNI', async () => {
    // No certificate needed: the ClientHello, with its server name, arrives in the clear.
    let hello: Buffer = Buffer.alloc(0);
    const tls = createNetServer((socket) => socket.once('data', (chunk: Buffer) => ((hello = chunk), socket.destroy())));
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    try {
      const port = (tls.address() as AddressInfo).port;
      const result = await send({ url: `https://merchant.example:${port}/cb`, lookup: lookupTo('127.0.0.1') });
      expect(result).toMatchObject({ acknowledged: false, statusCode: null, error: expect.any(String) });
      expect(hello.includes('merchant.example')).toBe(true);
    } finally {
      await new Promise((r) => tls.close(r));
    }
  });
});

describe('kept connections', () => {
  let connections: CallbackConnections;
  beforeEach(() => {
    connections = new CallbackConnections();
  });
  afterEach(() => connections.close());

  /** A server that counts its connections and the requests on each. */
  async function countingServer(handler: (requestOnSocket: number, req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1', port = 0) {
    const perSocket = new Map<Socket, number>();
    const server = createServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      req.resume();
      req.on('end', () => handler(n, req, res));
    });
    await new Promise<void>((r) => server.listen(port, host, r));
    return {
      port: (server.address() as AddressInfo).port,
      connections: () => perSocket.size,
      /** The server side of the newest connection. */
      lastSocket: () => [...perSocket.keys()].at(-1),
      requests: () => [...perSocket.values()].reduce((a, b) => a + b, 0),
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  it("sends an endpoint's callbacks one after another over one connection", async () => {
    const server = await countingServer((_n, _req, res) => res.end('success'));
    try {
      for (let i = 0; i < 5; i++) {
        expect(await send({ url: `http://127.0.0.1:${server.port}/cb`, connections })).toMatchObject({ acknowledged: true, error: null });
      }
      expect(server.requests()).toBe(5);
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("keeps a burst's connections for the next burst to the same endpoint", async () => {
    // Replies wait a little, so that the 40 callbacks of a burst are all under way at once, each on a connection of its own.
    const server = await countingServer((_n, _req, res) => setTimeout(() => res.end('success'), 50));
    try {
      const burst = () => Promise.all(Array.from({ length: 40 }, () => send({ url: `http://127.0.0.1:${server.port}/cb`, connections })));
      for (const outcomes of [await burst(), await burst()]) expect(outcomes.every((o) => o.acknowledged)).toBe(true);
      expect(server.requests()).toBe(80);
      expect(server.connections()).toBe(40);
    } finally {
      await server.close();
    }
  });

  it('sends again over a new connection when a kept one turns out closed, within the same attempt', async () => {
    // The second request on any connection finds it closed, as when the server's idle timeout ends it just then.
    const server = await countingServer((n, req, res) => (n === 1 ? res.end('success') : req.socket.destroy()));
    try {
      const url = `http://127.0.0.1:${server.port}/cb`;
      expect(await send({ url, connections })).toMatchObject({ acknowledged: true });
      expect(await send({ url, connections })).toMatchObject({ acknowledged: true, statusCode: 200, error: null });
      // The one that found the connection closed, and the one sent again (which the merchant may see as a repeat).
      expect(server.requests()).toBe(3);
      expect(server.connections()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('ends the attempt at its deadline when the request sent again over a new connection gets no reply', async () => {
    // The first request is answered; the second finds its kept connection closed; the third, on a new connection, is never answered.
    const server = await countingServer((_n, req, res) => {
      const nth = server.requests();
      if (nth === 1) res.end('success');
      else if (nth === 2) req.socket.destroy();
    });
    try {
      const url = `http://127.0.0.1:${server.port}/cb`;
      expect(await send({ url, connections })).toMatchObject({ acknowledged: true });
      const started = Date.now();
      const result = await send({ url, connections, timeoutMs: 300 });
      expect(result).toMatchObject({ acknowledged: false, statusCode: null, error: 'timed out after 300 ms' });
      expect(result.latencyMs).toBeGreaterThanOrEqual(300);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect([server.requests(), server.connections()]).toEqual([3, 2]);
    } finally {
      await server.close();
    }
  });

  it('keeps no connection across a changed DNS answer: each vetted address has its own', async () => {
    const first = await countingServer((_n, _req, res) => res.end('success'));
    const second = await countingServer((_n, _req, res) => res.end('success'), '127.0.0.2', first.port);
    try {
      const url = `http://merchant.example:${first.port}/cb`;
      expect(await send({ url, connections, lookup: lookupTo('127.0.0.1') })).toMatchObject({ acknowledged: true });
      expect(await send({ url, connections, lookup: lookupTo('127.0.0.2') })).toMatchObject({ acknowledged: true });
      expect(await send({ url, connections, lookup: lookupTo('127.0.0.1') })).toMatchObject({ acknowledged: true });
      expect([first.requests(), first.connections()]).toEqual([2, 1]);
      expect([second.requests(), second.connections()]).toEqual([1, 1]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('closes the idle connections of the least recently used endpoint beyond its bound, and every one on close', async () => {
    const bounded = new CallbackConnections(1);
    const [first, second] = await Promise.all([countingServer((_n, _req, res) => res.end('success')), countingServer((_n, _req, res) => res.end('success'))]);
    const sockets = new Map<number, Socket>();
    /** Until the server's side of the endpoint's kept connection has closed: at once, well before the 4 s idle timeout would. */
    const closedOn = (server: { port: number }) =>
      new Promise<void>((done, fail) => {
        const socket = sockets.get(server.port)!;
        if (socket.closed) return done();
        const late = setTimeout(() => fail(new Error(`the connection to port ${server.port} is still open after 1 s`)), 1_000);
        socket.once('close', () => {
          clearTimeout(late);
          done();
        });
      });
    try {
      for (const server of [first, second]) {
        const result = await send({ url: `http://127.0.0.1:${server.port}/cb`, connections: bounded });
        expect(result).toMatchObject({ acknowledged: true });
        sockets.set(server.port, server.lastSocket()!);
      }
      // The second endpoint pushed the first out: its kept connection is closed, the second's kept.
      await closedOn(first);
      expect(sockets.get(second.port)!.destroyed).toBe(false);
      bounded.close();
      await closedOn(second);
      // And the first endpoint, used again, connects anew.
      await send({ url: `http://127.0.0.1:${first.port}/cb`, connections: bounded });
      expect([first.connections(), second.connections()]).toEqual([2, 1]);
    } finally {
      bounded.close();
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('closes the connection of a reply it stopped reading', async () => {
    const server = await countingServer((_n, _req, res) => res.end(Buffer.alloc(70 * 1024, 'a')));
    try {
      const url = `http://127.0.0.1:${server.port}/cb`;
      expect(await send({ url, connections })).toMatchObject({ acknowledged: false, error: expect.stringContaining('exceeds') });
      expect(await send({ url, connections })).toMatchObject({ acknowledged: false });
      expect(server.connections()).toBe(2);
    } finally {
      await server.close();
    }
  });
});

describe('SSRF refusals (allowPrivateNetworks false)', () => {
  // A refusal must happen before any socket exists; the spy also keeps a regression from sending anywhere.
  let connect: jest.SpyInstance;
  beforeEach(() => {
    connect = jest.spyOn(Socket.prototype, 'connect').mockImplementation(() => {
      throw new Error('test guard: no connection may be attempted');
    });
  });
  afterEach(() => connect.mockRestore());

  const refusals: Array<[string, (port: number) => string, SendCallbackOptions['lookup'], RegExp]> = [
    ['127.0.0.1', (p) => `http://127.0.0.1:${p}/`, undefined, /^forbidden address 127\.0\.0\.1$/],
    ['localhost (real resolution)', (p) => `http://localhost:${p}/`, undefined, /^forbidden address (127\.0\.0\.1|::1)$/],
    ['[::1]', (p) => `http://[::1]:${p}/`, undefined, /^forbidden address ::1$/],
    ['10.1.2.3', () => 'http://10.1.2.3/', undefined, /^forbidden address 10\.1\.2\.3$/],
    ['metadata', () => 'http://169.254.169.254/latest/meta-data', undefined, /^forbidden address 169\.254\.169\.254$/],
    ['IPv4-mapped loopback', () => 'http://[::ffff:127.0.0.1]/', undefined, /^forbidden address ::ffff:7f00:1$/],
    ['decimal loopback', () => 'http://2130706433/', undefined, /^forbidden address 127\.0\.0\.1$/],
    ['a name resolving to a private address', (p) => `http://internal.example:${p}/`, lookupTo('192.168.1.10'), /^forbidden address 192\.168\.1\.10$/],
    ['a name resolving to public and private', (p) => `http://mixed.example:${p}/`, lookupTo('8.8.8.8', '10.0.0.5'), /^forbidden address 10\.0\.0\.5$/],
    ['a name resolving to EC2 IPv6 metadata', () => 'http://meta.example/', lookupTo('fd00:ec2::254'), /^forbidden address fd00:ec2::254$/],
    ['ftp', () => 'ftp://x/', undefined, /^unsupported URL scheme ftp:$/],
    ['file', () => 'file:///etc/passwd', undefined, /^unsupported URL scheme file:$/],
    ['credentials', () => 'http://user:pass@host/', undefined, /^credentials in the callback URL are not allowed$/],
    ['not a URL', () => 'not a url', undefined, /^invalid callback URL$/],
  ];

  it.each(refusals)('%s', async (_name, url, lookup, error) => {
    const server = await serve(reply(200, 'success'));
    const result = await send({ url: url(server.port), lookup, allowPrivateNetworks: false });
    expect(result).toMatchObject({ acknowledged: false, statusCode: null, replyExcerpt: '', error: expect.stringMatching(error) });
    expect(server.received).toHaveLength(0);
    expect(connect).not.toHaveBeenCalled();
  });

  it('does not resolve a URL it refuses on its face', async () => {
    const lookup = lookupTo('127.0.0.1');
    await send({ url: 'http://user:pass@merchant.example/', lookup, allowPrivateNetworks: false });
    await send({ url: 'ftp://merchant.example/', lookup, allowPrivateNetworks: false });
    expect(lookup).not.toHaveBeenCalled();
  });
});

describe('isForbiddenAddress', () => {
  it.each<[string, boolean]>([
    ['0.0.0.0', true],
    ['0.255.255.255', true],
    ['1.0.0.0', false],
    ['9.255.255.255', false],
    ['10.0.0.0', true],
    ['10.255.255.255', true],
    ['11.0.0.0', false],
    ['100.63.255.255', false],
    ['100.64.0.0', true],
    ['100.127.255.255', true],
    ['100.128.0.0', false],
    ['126.255.255.255', false],
    ['127.0.0.0', true],
    ['127.255.255.255', true],
    ['128.0.0.0', false],
    ['169.253.255.255', false],
    ['169.254.0.0', true],
    ['169.254.169.254', true],
    ['169.254.255.255', true],
    ['169.255.0.0', false],
    ['172.15.255.255', false],
    ['172.16.0.0', true],
    ['172.31.255.255', true],
    ['172.32.0.0', false],
    ['192.167.255.255', false],
    ['192.168.0.0', true],
    ['192.168.255.255', true],
    ['192.169.0.0', false],
    ['223.255.255.255', false],
    ['224.0.0.0', true],
    ['239.255.255.255', true],
    ['240.0.0.0', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['::', true],
    ['::1', true],
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true], // outside 2000::/3
    ['fc00::', true],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['fd00:ec2::254', true],
    ['fe80::', true],
    ['fe80::1%eth0', true],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['ff00::', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['0:0:0:0:0:ffff:a01:203', true],
    ['::ffff:169.254.169.254', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::127.0.0.1', true],
    ['64:ff9b::a00:1', true],
    ['64:ff9b::8.8.8.8', false],
    ['::127.0.0.1', true], // IPv4-compatible: deprecated, never a real destination
    ['2001:db8::1', true],
    ['2002:7f00:1::1', true],
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['2000::', false],
    ['2606:4700::1111', false],
    ['2a00:1450:4001:80b::200e', false],
    ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['4000::', true],
    ['not-an-ip', true],
    ['', true],
  ])('%s -> forbidden: %s', (ip, forbidden) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
  });
});

describe('refusedCallbackHost: what a callback URL alone shows', () => {
  it.each<[string, string | undefined]>([
    ['https://shop.example/topup/callback', undefined],
    ['http://8.8.8.8/cb', undefined],
    ['http://127.0.0.1:3000/topup/callback', '127.0.0.1 is a loopback address'],
    ['http://127.1.2.3/cb', '127.1.2.3 is a loopback address'],
    ['http://[::1]:3000/cb', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/cb', '::ffff:7f00:1 is a loopback address'],
    ['http://localhost:3000/cb', 'localhost is a loopback name'],
    ['http://shop.localhost/cb', 'shop.localhost is a loopback name'],
    ['http://192.168.1.10/cb', '192.168.1.10 is not a public address'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is not a public address'],
    ['not a url', undefined],
  ])('%s', (url, expected) => {
    expect(refusedCallbackHost(url)).toBe(expected);
  });
});
