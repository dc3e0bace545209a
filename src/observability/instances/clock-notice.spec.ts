import { clockNotice } from './instance-heartbeat';

/** The heartbeat's log lines about the instance's clock: once as it goes past a second, once as it comes back. */
describe('clockNotice', () => {
  it('says nothing while the clock stays within a second, either way', () => {
    expect(clockNotice(12, false)).toBeUndefined();
    expect(clockNotice(-1000, false)).toBeUndefined();
  });

  it('warns as the clock goes past a second, ahead or behind, and not again while it stays there', () => {
    expect(clockNotice(1500, false)).toEqual({ level: 'warn', message: expect.stringContaining("this instance's clock is 1.5 s ahead of the database's") });
    expect(clockNotice(-2300, false)).toEqual({ level: 'warn', message: expect.stringContaining("this instance's clock is 2.3 s behind the database's") });
    expect(clockNotice(1800, true)).toBeUndefined();
  });

  it('says once that the clock came back', () => {
    expect(clockNotice(-200, true)).toEqual({
      level: 'log',
      message: "this instance's clock is back within 1 s of the database's (0.2 s behind the database's)",
    });
  });
});
