import { AppLogger } from './app-logger';
import { logLines } from './log-lines';

describe('AppLogger, pretty lines', () => {
  const nestStamp = (ms: number) =>
    new Intl.DateTimeFormat(undefined, { year: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', day: '2-digit', month: '2-digit' }).format(ms);

  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it("carry Nest's timestamp of the second each line is written in", () => {
    const lines: string[] = [];
    // Without the colours a terminal gets; a write carries the lines of a turn, each ending in a newline.
    jest.spyOn(process.stdout, 'write').mockImplementation(
      (chunk: string | Uint8Array) =>
        lines.push(
          ...String(chunk)
            .replace(/\x1b\[[0-9;]*m/g, '')
            .split(/(?<=\n)/),
        ) > 0,
    );
    const logger = new AppLogger('pretty');
    const start = Date.UTC(2026, 10, 26, 23, 59, 58, 900);
    jest.useFakeTimers({ now: start });
    logger.log({ message: 'first', request_id: 'r1', route: '/x' }, 'Access');
    jest.setSystemTime(start + 50);
    logger.log('second');
    jest.setSystemTime(start + 150);
    logger.log('third');
    jest.setSystemTime(start + 2_000);
    logger.log('fourth');
    logLines.flush();

    expect(lines).toHaveLength(4);
    const stamps = [start, start + 50, start + 150, start + 2_000].map(nestStamp);
    expect(stamps[0]).not.toBe(stamps[2]);
    lines.forEach((line, i) => expect(line).toContain(` ${stamps[i]} `));
    expect(lines[0]).toMatch(/\[Access\] \[r1\] first route=\/x\n$/);
  });
});
