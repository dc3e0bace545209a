/** Builds a WHERE clause from optional conditions, numbering placeholders as it goes. */
export class Conditions {
  readonly values: unknown[] = [];
  private readonly clauses: string[] = [];

  /** `sql` uses `?` for each value, in order. */
  add(sql: string, ...values: unknown[]): this {
    this.clauses.push(sql.replace(/\?/g, () => `$${this.values.push(values.shift())}`));
    return this;
  }

  addIf(value: unknown, sql: string): this {
    return value === undefined ? this : this.add(sql, value);
  }

  where(): string {
    return this.clauses.length === 0 ? '' : `where ${this.clauses.join(' and ')}`;
  }

  /** The placeholder for one more value, e.g. the LIMIT. */
  next(value: unknown): string {
    return `$${this.values.push(value)}`;
  }
}
