import { spawnSync } from 'node:child_process';
import { AppLogger } from './app-logger';
import { logLines } from './log-lines';

describe('log lines: the routine lines of one event-loop turn leave in one write', () => {
  let writes: { stream: string; text: string }[];

  beforeEach(() => {
    writes = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      jest.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => writes.push({ stream, text: String(chunk) }) > 0);
    }
  });
  afterEach(() => {
    logLines.flush();
    jest.restoreAllMocks();
  });

  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('writes nothing during the turn, then every line of it in order in one write', async () => {
    const logger = new AppLogger('json');
    for (let i = 1; i <= 3; i++) logger.log({ message: `line ${i}`, request_id: `r${i}` }, 'Access');
    expect(writes).toEqual([]);

    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(writes[0].stream).toBe('stdout');
    const lines = writes[0].text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual(
      [1, 2, 3].map((i) => expect.objectContaining({ level: 'info', context: 'Access', message: `line ${i}`, request_id: `r${i}` })),
    );
  });

  it('writes a warning at once, after the lines before it; an error likewise on stderr', () => {
    const logger = new AppLogger('json');
    logger.log('routine');
    logger.warn('careful');
    logger.log('after the warning');
    logger.error('broken');

    expect(writes.map(({ stream, text }) => [stream, JSON.parse(text.trim().split('\n').pop()!).message])).toEqual([
      ['stdout', 'routine'],
      ['stdout', 'careful'],
      ['stdout', 'after the warning'],
      ['stderr', 'broken'],
    ]);
  });

  it('writes at once when the pending lines pass 64 KiB, so a burst does not grow memory', () => {
    const logger = new AppLogger('json');
    const message = 'x'.repeat(1000);
    let logged = 0;
    while (writes.length === 0 && logged < 1000) {
      logger.log(message);
      logged++;
    }
    expect(writes).toHaveLength(1);
    expect(writes[0].text.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(writes[0].text.split('\n').filter(Boolean)).toHaveLength(logged);
  });

  it('writes the pending lines when the process exits, also through process.exit', () => {
    const script = [
      "const { AppLogger } = require('./src/infrastructure/logging/app-logger');",
      "const logger = new AppLogger('json');",
      "for (let i = 1; i <= 3; i++) logger.log('before exit ' + i);",
      'process.exit(3);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(child.status).toBe(3);
    expect(
      child.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).message),
    ).toEqual(['before exit 1', 'before exit 2', 'before exit 3']);
  });
});
