/** Printing figures: Markdown tables, and a figure measured once per pass. */

/** A Markdown table: the first `left` columns left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][], left = 1): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (i < left ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i < left ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)];
}

export const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** A figure to print: one value per pass. */
export class Spread {
  constructor(readonly values: number[]) {}
  get median() {
    return median(this.values);
  }
  /** "12.3 (11.0–14.1)", or just the value when there is one. */
  show(digits: number): string {
    const finite = this.values.filter((v) => Number.isFinite(v));
    if (finite.length === 0) return 'n/a';
    const f = (v: number) => v.toFixed(digits);
    if (finite.length === 1) return f(finite[0]);
    return `${f(this.median)} (${f(Math.min(...finite))}–${f(Math.max(...finite))})`;
  }
}
