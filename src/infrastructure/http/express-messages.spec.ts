import type { Express, Request, Response } from 'express';
import http, { IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { messagesOnExpressPrototypes } from './express-messages';
import { HttpEdgeAdapter } from './http-edge.adapter';

describe('requests and replies built on express prototypes', () => {
  let adapter: HttpEdgeAdapter;
  let base: string;
  const seenBeforeExpress: { request: boolean; response: boolean }[] = [];

  beforeAll(async () => {
    adapter = new HttpEdgeAdapter({ httpHeadersTimeoutMs: 10_000, httpRequestTimeoutMs: 30_000, httpKeepAliveTimeoutMs: 65_000, trustProxy: 0 });
    adapter.initHttpServer();
    const app = adapter.getInstance<Express>();
    app.get('/echo', (request: Request, response: Response) => {
      response.status(201).json({ header: request.get('x-test'), path: request.path, isMessage: request instanceof IncomingMessage });
    });
    // Runs before express sees the request: the objects must already be on its prototypes.
    adapter.getHttpServer().prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      seenBeforeExpress.push({ request: Object.getPrototypeOf(request) === app.request, response: Object.getPrototypeOf(response) === app.response });
    });
    await new Promise<void>((resolve) => adapter.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(adapter.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(() => adapter.close());

  it('makes each request and reply on express prototypes, so express has nothing to move', async () => {
    const response = await fetch(`${base}/echo`, { headers: { 'x-test': 'yes' } });
    expect(response.status).toBe(201);
    expect(seenBeforeExpress.at(-1)).toEqual({ request: true, response: true });
  });

  it("keeps express's helpers and Node's own behaviour, over one kept-alive connection", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; body: unknown; socket: unknown }>((resolve, reject) => {
        http
          .get(`${base}/echo?x=1`, { agent, headers: { 'x-test': 'kept' } }, (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), socket: response.socket }));
          })
          .on('error', reject);
      });
    const first = await get();
    const second = await get();
    agent.destroy();
    expect(first.body).toEqual({ header: 'kept', path: '/echo', isMessage: true });
    expect(second).toMatchObject({ status: 201, body: first.body });
    expect(second.socket).toBe(first.socket);
  });

  it("keeps Node's own constructors were they classes, which cannot be called on an object made elsewhere", () => {
    class Request extends IncomingMessage {}
    class Response extends ServerResponse {}
    const app = { request: Object.create(IncomingMessage.prototype) as object, response: Object.create(ServerResponse.prototype) as object };
    expect(messagesOnExpressPrototypes(app, { IncomingMessage: Request, ServerResponse: Response as typeof ServerResponse })).toEqual({});
    expect(Object.keys(messagesOnExpressPrototypes(app))).toEqual(['IncomingMessage', 'ServerResponse']);
  });
});
