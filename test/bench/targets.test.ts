import { Spread } from './tables';
import { atLeast, atMost, Check, verdict } from './targets';

/** A check of "≤ 4" over the passes' figures. */
const check = (values: number[], notJudged?: string): Check => ({
  what: 'p99 ÷ p50',
  target: '≤ 4',
  ok: atMost(4),
  service: new Spread(values),
  digits: 2,
  notJudged,
});

describe('npm run bench: the verdict beside each target', () => {
  it('says yes or NO for one figure, and over several passes how many met it', () => {
    expect(verdict(check([3]))).toBe('yes');
    expect(verdict(check([5]))).toBe('NO');
    expect(verdict(check([2, 3]))).toBe('yes, every pass');
    expect(verdict(check([5, 6]))).toBe('NO, no pass');
    expect(verdict(check([3, 5, 6]))).toBe('1 of 3 passes');
  });

  it('leaves out passes without a figure, and says n/a when none has one', () => {
    expect(verdict(check([Number.NaN, 3]))).toBe('yes');
    expect(verdict(check([Number.NaN]))).toBe('n/a');
  });

  it('prints the reason instead of a verdict when the figure is not judged', () => {
    expect(verdict(check([3], 'not judged: load not carried'))).toBe('not judged: load not carried');
    expect(verdict(check([9], 'not judged: load not carried'))).toBe('not judged: load not carried');
  });

  it('meets a bound on either side inclusively', () => {
    expect(atMost(4)(4)).toBe(true);
    expect(atMost(4)(4.01)).toBe(false);
    expect(atLeast(0.95)(0.95)).toBe(true);
    expect(atLeast(0.95)(0.949)).toBe(false);
  });
});
