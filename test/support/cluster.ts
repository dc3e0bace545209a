import { Agent, createServer, request as forward, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ChildService, spawnService } from './child-service';
import { TestDatabase } from './test-database';

/**
 * Service processes on one database behind a round-robin proxy, as a load
 * balancer would put them: each request goes to the next instance in turn,
 * so two consecutive requests of a test always reach different instances
 * when there are two. With one instance the same tests show what one
 * instance answers, which two must answer too.
 */
export interface Cluster {
  /** The proxy: what a merchant or a staff member would call. */
  url: string;
  instances: ChildService[];
  /** Requests forwarded to each instance so far. */
  hits(): number[];
  stop(): Promise<void>;
}

export async function startCluster(db: TestDatabase, size: number, env: Record<string, string> = {}): Promise<Cluster> {
  // Started together, as after a deployment: the migrations' advisory lock makes them take turns.
  const started = await Promise.allSettled(Array.from({ length: size }, () => spawnService(db, env)));
  const instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.all(instances.map((instance) => instance.kill('SIGTERM')));
    throw failed.reason;
  }
  const proxy = await roundRobinProxy(instances.map((instance) => new URL(instance.url)));
  return {
    url: proxy.url,
    instances,
    hits: proxy.hits,
    async stop() {
      await proxy.stop();
      await Promise.all(instances.map((instance) => instance.kill('SIGTERM')));
    },
  };
}

async function roundRobinProxy(targets: readonly URL[]) {
  const hits = targets.map(() => 0);
  const agent = new Agent({ keepAlive: true });
  let next = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const index = next;
    next = (next + 1) % targets.length;
    hits[index]++;
    const target = targets[index];
    const upstream = forward(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: target.host }, agent },
      (reply) => {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(outgoing);
      },
    );
    upstream.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(`proxy: ${error.message}`);
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => [...hits],
    stop: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
