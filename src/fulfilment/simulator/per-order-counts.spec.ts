import { PerOrderCounts } from './per-order-counts';

describe('PerOrderCounts', () => {
  it('counts each order, and past the orders it keeps forgets the oldest tenth at once', () => {
    const counts = new PerOrderCounts(10);
    for (let i = 0; i < 11; i++) counts.count(`O${i}`);
    expect([counts.count('O0'), counts.count('O0'), counts.size]).toEqual([2, 3, 11]);
    // The 12th order passes 10 + 1: the two oldest go, O0 (counted again, but first set) among them.
    counts.count('O11');
    expect([counts.size, counts.has('O0'), counts.has('O1'), counts.get('O11')]).toEqual([10, false, false, 1]);
  });
});
