/** Orders a simulator counts at most: it may run for days, and must not grow with every order it ever saw. */
const DEFAULT_ORDERS_KEPT = 100_000;

/**
 * Counts per order_no, for the latest orders only: past `kept` orders, the
 * oldest tenth is forgotten at once (one pass, not one per order). Tests
 * read the counts of their own orders, the latest.
 */
export class PerOrderCounts extends Map<string, number> {
  constructor(private readonly kept = DEFAULT_ORDERS_KEPT) {
    super();
  }

  count(orderNo: string): number {
    const n = (this.get(orderNo) ?? 0) + 1;
    this.set(orderNo, n);
    if (this.size > this.kept + Math.ceil(this.kept / 10)) {
      let forget = this.size - this.kept;
      for (const key of this.keys()) {
        if (forget-- === 0) break;
        this.delete(key);
      }
    }
    return n;
  }
}
