/**
 * `npm run bench:access-log`: what the access log costs a request, in CPU,
 * away from the rest of the service. Each simulated request goes through
 * RequestLog (src/infrastructure/http/request-log.ts) as the HTTP edge drives
 * it: an id and the X-Request-Id header at arrival; the handler's work, a
 * chain of awaits (a submit makes about 70 promises), in the request's scope
 * when the checkout has one (request-context.ts: the scope that puts the
 * request id on every line is paid for on every promise); then the reply's
 * 'close' and the access line, through the AppLogger, written with the lines
 * of its event-loop turn to stdout. `--concurrency` requests share each turn,
 * as under load.
 *
 *   npm run bench:access-log -- [--root DIR] [--format json|pretty] [--requests N] [--awaits N] [--concurrency N] [--rounds N] [--no-scope]
 *
 * `--root` is the checkout whose src/ is measured (default this one): a
 * checkout of an earlier commit gives the figures before a change, on the
 * same machine in the same minutes. Send stdout away (`> /dev/null`): the
 * figures are printed on stderr. Printed: CPU µs per request of the whole
 * loop (user and system, this process), the median of the rounds with the
 * lowest and highest, and the same loop with the handler's awaits only
 * (no RequestLog, no line, no scope; run first, as a scope once used stays
 * on), so that the difference is the log's.
 */
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';

interface Options {
  root: string;
  format: 'json' | 'pretty';
  requests: number;
  awaits: number;
  concurrency: number;
  rounds: number;
  /** Leave the request scope out, to see what it costs. */
  noScope: boolean;
}

interface Context {
  route?: string;
  merchantId?: string;
  code?: string;
}

interface RequestLogLike {
  begin(request: unknown, response: unknown): Context;
}

type Scope = (context: Context, serve: () => void) => void;

function readOptions(argv: string[]): Options {
  const options: Options = { root: resolve(__dirname, '..', '..'), format: 'json', requests: 20_000, awaits: 35, concurrency: 32, rounds: 5, noScope: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--no-scope') {
      options.noScope = true;
      continue;
    }
    const match = argv[i].match(/^--([a-z]+)(?:=(.*))?$/);
    const name = match?.[1];
    const value = match?.[2] ?? argv[++i];
    if (name === 'root') options.root = resolve(value);
    else if (name === 'format' && (value === 'json' || value === 'pretty')) options.format = value;
    else if (name === 'requests' || name === 'awaits' || name === 'concurrency' || name === 'rounds') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < (name === 'awaits' ? 0 : 1)) throw new Error(`--${name} takes a positive integer, not ${value}`);
      options[name] = n;
    } else throw new Error(`unknown option ${argv[i]}; see the header of test/bench/access-log-bench.ts`);
  }
  return options;
}

class FakeResponse extends EventEmitter {
  statusCode = 202;
  writableFinished = true;
  readonly headers = new Map<string, unknown>();
  setHeader(name: string, value: unknown): void {
    this.headers.set(name, value);
  }
}

/** The awaits of a handler: each async call and its await make about two promises. */
async function handlerWork(awaits: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < awaits; i++) sum += await step(i);
  return sum;
}

async function step(i: number): Promise<number> {
  return i & 1;
}

async function oneRequest(options: Options, requests: RequestLogLike | undefined, scope: Scope | undefined, n: number): Promise<void> {
  const request = {
    method: 'POST',
    url: '/api/v2/topup/submit',
    headers: n % 2 === 0 ? { 'x-request-id': `bench-${n}` } : {},
  };
  const response = new FakeResponse();
  if (!requests) {
    await handlerWork(options.awaits);
    return;
  }
  const context = requests.begin(request, response);
  await new Promise<void>((done) => {
    const serve = () => {
      context.route = '/api/v2/topup/submit';
      context.merchantId = 'mch_3cc0746020d39388';
      void handlerWork(options.awaits).then(() => done());
    };
    if (scope) scope(context, serve);
    else serve();
  });
  response.emit('close');
}

async function loop(options: Options, requests: RequestLogLike | undefined, scope: Scope | undefined): Promise<number> {
  const before = process.cpuUsage();
  for (let sent = 0; sent < options.requests; sent += options.concurrency) {
    const batch: Promise<void>[] = [];
    for (let i = 0; i < options.concurrency; i++) batch.push(oneRequest(options, requests, scope, sent + i));
    await Promise.all(batch);
    // The end of the turn, where the lines of the turn are written.
    await new Promise((next) => setImmediate(next));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / options.requests;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values: number[]) => `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  /* eslint-disable @typescript-eslint/no-require-imports -- the checkout to measure is chosen at run time */
  const { AppLogger } = require(`${options.root}/src/infrastructure/logging/app-logger`) as { AppLogger: new (format: string) => object };
  const { RequestLog } = require(`${options.root}/src/infrastructure/http/request-log`) as { RequestLog: new () => RequestLogLike };
  const { Logger } = require(`${options.root}/node_modules/@nestjs/common`) as typeof import('@nestjs/common');
  const context = require(`${options.root}/src/infrastructure/logging/request-context`) as { serveInRequestScope?: Scope };
  /* eslint-enable @typescript-eslint/no-require-imports */
  Logger.overrideLogger(new AppLogger(options.format) as never);
  const requests = new RequestLog();
  const scope = options.noScope ? undefined : context.serveInRequestScope;

  // The handler alone first: a request scope, once used, hooks every promise of the process from then on.
  // Each starts with a round unmeasured, the JIT's.
  const without: number[] = [];
  await loop(options, undefined, undefined);
  for (let round = 0; round < options.rounds; round++) without.push(await loop(options, undefined, undefined));
  const withLog: number[] = [];
  await loop(options, requests, scope);
  for (let round = 0; round < options.rounds; round++) withLog.push(await loop(options, requests, scope));
  const log = withLog.map((us) => us - median(without));
  process.stderr.write(
    [
      `root ${options.root}; LOG_FORMAT=${options.format}; ${options.requests} requests a round, ${options.concurrency} a turn, ${options.awaits} awaits each; ` +
        `${scope ? 'request scope (AsyncLocalStorage)' : 'no request scope'}; Node ${process.version}`,
      `CPU µs per request, median of ${options.rounds} rounds (lowest–highest):`,
      `  with the access log   ${spread(withLog)}`,
      `  the handler's awaits  ${spread(without)}`,
      `  the access log's part ${spread(log)}`,
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
