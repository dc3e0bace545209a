import { Controller, Get, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { spawnSync } from 'node:child_process';
import { AppLogger, isoTime, LoggerOptions } from './app-logger';
import { wantsColour } from './log-destination';
import { logLines } from './log-lines';
import { PrettyDestination } from './pretty-destination';
import { RequestContext, serveInRequestScope } from './request-context';

type Line = Record<string, unknown>;
const ESC = '\x1b';

describe('AppLogger: pino behind Nest', () => {
  let writes: { stream: 'stdout' | 'stderr'; text: string }[];

  beforeEach(() => {
    writes = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      jest.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => writes.push({ stream, text: String(chunk) }) > 0);
    }
  });
  afterEach(() => {
    logLines.flush();
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** Every line written so far, in order; the routine ones of this turn included. */
  const written = (): { stream: string; text: string }[] => {
    logLines.flush();
    return writes.flatMap(({ stream, text }) => text.split(/(?<=\n)/).map((line) => ({ stream, text: line })));
  };
  const jsonLines = (): Line[] => written().map(({ text }) => JSON.parse(text) as Line);
  /** Nest's Logger, as the service's code uses it, writing through this AppLogger. */
  const nestLoggerOn = (options: LoggerOptions, context: string): Logger => {
    Logger.overrideLogger(new AppLogger(options));
    return new Logger(context);
  };

  describe('json', () => {
    it('writes one JSON object per line under the documented names; the fields of a message become keys', () => {
      const logger = new AppLogger({ format: 'json' });
      logger.log('listening', 'Main');
      logger.log({ message: 'POST /api/v2/balance 200', request_id: 'r1', method: 'POST', status: 200, code: undefined, duration_ms: 1.5 }, 'Access');

      expect(written().every(({ stream, text }) => stream === 'stdout' && text.endsWith('}\n'))).toBe(true);
      const [plain, access] = jsonLines();
      expect(plain).toEqual({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: process.pid,
        context: 'Main',
        message: 'listening',
      });
      expect(access).toEqual({
        level: 'info',
        time: expect.any(String),
        pid: process.pid,
        context: 'Access',
        message: 'POST /api/v2/balance 200',
        request_id: 'r1',
        method: 'POST',
        status: 200,
        duration_ms: 1.5,
      });
    });

    it('keeps the stack of an error, however Nest passes it, and writes errors on stderr', () => {
      const logger = nestLoggerOn({ format: 'json' }, 'Http');
      const failure = new Error('relation "rm_orders" does not exist');
      logger.error('unexpected error', failure.stack);
      logger.error(failure);
      logger.error('with the error itself', failure);
      logger.error('no stack at all');
      new Logger().error('a context given on the call', 'Elsewhere');

      const lines = written();
      expect(lines.map(({ stream }) => stream)).toEqual(['stderr', 'stderr', 'stderr', 'stderr', 'stderr']);
      const [withStack, errorItself, errorAsStack, noStack, elsewhere] = lines.map(({ text }) => JSON.parse(text) as Line);
      expect(withStack).toMatchObject({ level: 'error', context: 'Http', message: 'unexpected error', stack: failure.stack });
      expect(errorItself).toMatchObject({ level: 'error', context: 'Http', message: failure.message, stack: failure.stack });
      expect(errorAsStack).toMatchObject({ context: 'Http', message: 'with the error itself', stack: failure.stack });
      expect(noStack).toEqual(expect.objectContaining({ context: 'Http', message: 'no stack at all' }));
      expect(noStack).not.toHaveProperty('stack');
      expect(elsewhere).toMatchObject({ context: 'Elsewhere', message: 'a context given on the call' });
    });

    it('writes what LOG_LEVEL lets through: info and above by default', () => {
      const atInfo = nestLoggerOn({ format: 'json' }, 'X');
      atInfo.verbose('trace line');
      atInfo.debug('debug line');
      atInfo.log('info line');
      atInfo.warn('warn line');
      expect(jsonLines().map((l) => [l.level, l.message])).toEqual([
        ['info', 'info line'],
        ['warn', 'warn line'],
      ]);

      writes = [];
      const atWarn = nestLoggerOn({ format: 'json', level: 'warn' }, 'X');
      atWarn.log('info line');
      atWarn.warn('warn line');
      atWarn.fatal('fatal line');
      expect(jsonLines().map((l) => [l.level, l.message])).toEqual([
        ['warn', 'warn line'],
        ['fatal', 'fatal line'],
      ]);

      writes = [];
      const atDebug = nestLoggerOn({ format: 'json', level: 'debug' }, 'X');
      atDebug.verbose('trace line');
      atDebug.debug('debug line');
      expect(jsonLines().map((l) => [l.level, l.message])).toEqual([['debug', 'debug line']]);

      writes = [];
      nestLoggerOn({ format: 'json', level: 'silent' }, 'X').fatal('nothing');
      expect(written()).toEqual([]);
    });
  });

  describe("Nest's start-up wiring", () => {
    @Controller('things')
    class ThingsController {
      @Get(':id')
      one() {
        return {};
      }
    }
    @Module({ controllers: [ThingsController] })
    class ThingsModule {}

    /** The lines a Nest application writes while it starts, at this level. */
    const startUpLines = async (level: 'info' | 'debug'): Promise<Line[]> => {
      const logger = new AppLogger({ format: 'json', level });
      const app = await NestFactory.create(ThingsModule, { logger });
      await app.init();
      await app.close();
      return jsonLines();
    };

    it('is at debug: hidden at the default level, the route mapping and module lines included', async () => {
      const contexts = (lines: Line[]) => new Set(lines.map((line) => line.context));
      const atDebug = await startUpLines('debug');
      expect(atDebug).toContainEqual(expect.objectContaining({ level: 'debug', context: 'RouterExplorer', message: 'Mapped {/things/:id, GET} route' }));
      expect(contexts(atDebug)).toEqual(new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']));

      writes = [];
      const atInfo = await startUpLines('info');
      expect(atInfo.map((line) => line.message)).toEqual(['Starting Nest application...', 'Nest application successfully started']);
    });
  });

  describe('the request id', () => {
    const context = (requestId: string): RequestContext => ({ requestId, startedAt: process.hrtime.bigint() });

    /** Service code as the service writes it: its own Logger, no request at hand, awaits between the call and the line. */
    class PlaceOrder {
      private readonly logger = new Logger('Orders');
      async run(orderNo: string, delayMs: number): Promise<void> {
        await Promise.resolve();
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        this.logger.warn(`order ${orderNo}: upstream slow`);
        this.logger.log({ message: `order ${orderNo} placed`, order_no: orderNo });
      }
    }

    it('is on every line logged while a request is served, by whatever code, and on no other', async () => {
      Logger.overrideLogger(new AppLogger({ format: 'json' }));
      const service = new PlaceOrder();
      const served = (requestId: string, orderNo: string, delayMs: number) =>
        new Promise<void>((done) => serveInRequestScope(context(requestId), () => void service.run(orderNo, delayMs).then(done)));
      // Interleaved: the second request's lines come first.
      await Promise.all([served('req-a', 'A-1', 30), served('req-b', 'B-1', 5)]);
      new Logger('Background').log('not in any request');

      expect(jsonLines().map((l) => [l.context, l.request_id, l.message])).toEqual([
        ['Orders', 'req-b', 'order B-1: upstream slow'],
        ['Orders', 'req-b', 'order B-1 placed'],
        ['Orders', 'req-a', 'order A-1: upstream slow'],
        ['Orders', 'req-a', 'order A-1 placed'],
        ['Background', undefined, 'not in any request'],
      ]);
      expect(jsonLines()[1]).toMatchObject({ order_no: 'B-1' });
    });

    it('given on the line wins over the scope: a stream event logs for the request it names', () => {
      Logger.overrideLogger(new AppLogger({ format: 'json' }));
      serveInRequestScope(context('in-scope'), () => new Logger('Export').warn({ message: 'failed while streaming', request_id: 'named' }));
      expect(jsonLines()).toEqual([expect.objectContaining({ request_id: 'named', message: 'failed while streaming' })]);
    });
  });

  describe('pretty', () => {
    const ttys = (stdout: boolean, stderr = stdout) => ({ stdout: { isTTY: stdout }, stderr: { isTTY: stderr } });

    it('writes one readable line per event: time, level, context, request id, message, then the fields', () => {
      const logger = new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(false)) });
      logger.log({ message: 'POST /api/v2/balance 200', request_id: 'r1', route: '/api/v2/balance', status: 200, note: 'two words' }, 'Access');
      logger.warn('slow', 'Readiness');
      logger.log('no context');

      const [access, warning, bare] = written().map(({ text }) => text);
      expect(access).toMatch(
        /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[Access\] \[r1\] POST \/api\/v2\/balance 200 route=\/api\/v2\/balance status=200 note="two words"\n$/,
      );
      expect(warning).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}\[Readiness\] slow\n$/);
      expect(bare).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}no context\n$/);
    });

    it("shows the line's time in the machine's time zone", () => {
      const at = new Date(2026, 10, 26, 23, 59, 58, 7);
      jest.useFakeTimers({ now: at });
      new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(false)) }).log('at a known time');
      jest.setSystemTime(at.getTime() + 1_000);
      new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(false)) }).log('a second later');
      expect(written().map(({ text }) => text.slice(0, 12))).toEqual(['23:59:58.007', '23:59:59.007']);
    });

    it('puts an error stack on the lines after the error, indented', () => {
      const logger = new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(false)) });
      const failure = new Error('broken');
      logger.error('unexpected error', failure.stack, 'Http');

      const [{ stream, text }] = writes;
      expect(stream).toBe('stderr');
      const [first, ...stack] = text.trimEnd().split('\n');
      expect(first).toMatch(/ ERROR \[Http\] unexpected error$/);
      expect(stack.join('\n')).toBe(failure.stack!.replace(/^/gm, '    '));
    });

    it('colours a terminal only: a file or a pipe gets no escape codes', () => {
      const toPipes = new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(false)) });
      toPipes.log('plain', 'Main');
      toPipes.error('plain too', 'Main');
      expect(written().map(({ text }) => text)).toEqual([expect.not.stringContaining(ESC), expect.not.stringContaining(ESC)]);

      writes = [];
      const toTerminal = new AppLogger({ format: 'pretty', destination: new PrettyDestination(ttys(true, false)) });
      toTerminal.log('coloured', 'Main');
      toTerminal.error('not coloured: stderr is a file', 'Main');
      const [coloured, plain] = written().map(({ text }) => text);
      expect(coloured).toContain(ESC);
      expect(plain).not.toContain(ESC);
    });

    it('takes NO_COLOR (https://no-color.org) to mean none, even on a terminal', () => {
      expect(wantsColour({ isTTY: true }, {})).toBe(true);
      expect(wantsColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
      expect(wantsColour({ isTTY: false }, {})).toBe(false);
      expect(wantsColour({ isTTY: undefined } as never, {})).toBe(false);
    });
  });

  it('formats the time as toISOString does, the date part once a second', () => {
    for (const at of [
      Date.UTC(2026, 10, 26, 23, 59, 59, 999),
      Date.UTC(2026, 10, 27, 0, 0, 0, 0),
      Date.UTC(2026, 10, 27, 0, 0, 0, 7),
      Date.UTC(2026, 10, 27, 0, 0, 0, 42),
    ]) {
      jest.useFakeTimers({ now: at });
      expect(isoTime()).toBe(`,"time":"${new Date(at).toISOString()}"`);
    }
  });
});

describe('AppLogger in a process of its own', () => {
  const run = (script: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script.join('\n')], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, ...env },
    });

  it('writes the pending lines and a fatal line before process.exit ends the process', () => {
    const child = run([
      "const { AppLogger } = require('./src/infrastructure/logging/app-logger');",
      "const logger = new AppLogger('json');",
      "logger.log('routine, still pending', 'Main');",
      "logger.fatal('the last words', 'Main');",
      'process.exit(1);',
    ]);
    expect(child.status).toBe(1);
    expect(JSON.parse(child.stdout)).toMatchObject({ level: 'info', message: 'routine, still pending' });
    expect(JSON.parse(child.stderr)).toMatchObject({ level: 'fatal', context: 'Main', message: 'the last words' });
  });

  it('pretty, with stdout and stderr piped (not a terminal), by default: no escape codes', () => {
    const child = run(
      [
        "const { AppLogger } = require('./src/infrastructure/logging/app-logger');",
        "const logger = new AppLogger('pretty');",
        "logger.log('info', 'Main'); logger.warn('warn', 'Main'); logger.error('error', new Error('x').stack, 'Main');",
      ],
      { FORCE_COLOR: '1' },
    );
    expect(child.status).toBe(0);
    expect(child.stdout).toMatch(/INFO {2}\[Main\] info\n.*WARN {2}\[Main\] warn\n$/);
    expect(child.stderr).toContain('ERROR [Main] error');
    expect(child.stdout + child.stderr).not.toContain(ESC);
  });
});
