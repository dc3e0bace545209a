import { Logger } from '@nestjs/common';
import { ClientErrorLog } from './client-error-log';

describe('ClientErrorLog', () => {
  let lines: string[];
  let log: ClientErrorLog;

  beforeEach(() => {
    jest.useFakeTimers();
    lines = [];
    const logger = { log: (line: string) => lines.push(line) } as unknown as Logger;
    log = new ClientErrorLog(60_000, logger, () => Date.now());
  });
  afterEach(() => jest.useRealTimers());

  it('says nothing until the interval ends, then sums it up in one line', () => {
    for (let i = 0; i < 200; i++) log.record('abandoned mid-request');
    log.record('malformed');
    jest.advanceTimersByTime(59_999);
    expect(lines).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(lines).toEqual(['client errors in the last 60 s: 200 abandoned mid-request, 1 malformed']);
  });

  it('starts a new count after each line, and stays quiet without client errors', () => {
    log.record('timed out');
    jest.advanceTimersByTime(60_000);
    jest.advanceTimersByTime(600_000);
    log.record('headers too large');
    jest.advanceTimersByTime(60_000);
    expect(lines).toEqual(['client errors in the last 60 s: 1 timed out', 'client errors in the last 60 s: 1 headers too large']);
  });

  it('flush logs what is pending at once, and only once', () => {
    log.record('malformed');
    jest.advanceTimersByTime(5_000);
    log.flush();
    log.flush();
    jest.advanceTimersByTime(60_000);
    expect(lines).toEqual(['client errors in the last 5 s: 1 malformed']);
  });
});
