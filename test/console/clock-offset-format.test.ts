import { clockOffset } from '../../src/console/app/components/format';

/** The status page's clock column (src/console/app/components/format.ts): the console's own folder is type-checked for the browser, without Jest's types. */
describe('the console writes an instance’s clock against the database’s', () => {
  it.each([
    [12, '+12 ms'],
    [-850, '-850 ms'],
    [0, '+0 ms'],
    [1000, '+1000 ms'],
    [1500, '+1.5 s, over a second'],
    [-2300, '-2.3 s, over a second'],
    [null, 'not measured'],
  ])('%p ms as %p', (ms, text) => {
    expect(clockOffset(ms)).toBe(text);
  });
});
