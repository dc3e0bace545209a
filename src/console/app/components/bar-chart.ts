import { h, svg } from '../dom';
import { INK } from './chart-scale';

/** A bar: what it is, its length, and the text beside it. */
export interface Bar {
  label: string;
  value: number;
  shown: string;
  /** A bar past a limit is drawn in the warning colour, and says so in its text. */
  alarm?: boolean;
}

export interface BarChartSpec {
  id: string;
  title: string;
  bars: readonly Bar[];
  /** What the values are, for the table's head. */
  unit: string;
  summary: string;
  empty: string;
}

const WIDTH = 560;
const ROW = 24;
const LABEL = 150;
const VALUE = 110;
const COLOUR = '#1f5fbf';
const ALARM = '#b42318';

/**
 * Values of things at one moment as horizontal bars (a projection's lag),
 * with a label on the left and the value on the right; the same figures as a
 * table in a <details>. The longest bar fills the width; a zero has none.
 */
export function barChart(spec: BarChartSpec): HTMLElement {
  const heading = h('h2', { id: `${spec.id}-title` }, spec.title);
  if (spec.bars.length === 0) return h('section', { id: spec.id, class: 'dash-chart empty' }, heading, h('p', { class: 'muted' }, spec.empty));
  const max = Math.max(...spec.bars.map((b) => b.value));
  const room = WIDTH - LABEL - VALUE;
  const height = spec.bars.length * ROW + 8;
  return h(
    'section',
    { id: spec.id, class: 'dash-chart', 'aria-labelledby': `${spec.id}-title` },
    heading,
    h('p', { id: `${spec.id}-summary`, class: 'muted dash-summary' }, spec.summary),
    svg(
      'svg',
      { viewBox: `0 0 ${WIDTH} ${height}`, role: 'img', 'aria-labelledby': `${spec.id}-title ${spec.id}-summary`, class: 'dash-svg bars' },
      spec.bars.map((b, i) => {
        const y = 4 + i * ROW;
        const length = max > 0 ? Math.max(b.value > 0 ? 2 : 0, (b.value / max) * room) : 0;
        return svg(
          'g',
          { 'data-bar': b.label, 'data-value': b.value },
          svg('text', { x: LABEL - 8, y: y + 15, 'text-anchor': 'end', fill: INK, 'font-size': 12 }, b.label),
          svg('rect', { x: LABEL, y: y + 3, width: length, height: ROW - 8, fill: b.alarm ? ALARM : COLOUR }),
          svg('line', { x1: LABEL, x2: LABEL, y1: y, y2: y + ROW, stroke: INK, 'stroke-width': 1 }),
          svg('text', { x: LABEL + length + 6, y: y + 15, fill: b.alarm ? ALARM : INK, 'font-size': 12 }, b.shown),
          svg('title', {}, `${b.label}: ${b.shown}`),
        );
      }),
    ),
    h(
      'details',
      { class: 'dash-figures' },
      h('summary', {}, `${spec.title}: the figures`),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col', class: 'num' }, spec.unit))),
        h(
          'tbody',
          {},
          spec.bars.map((b) => h('tr', {}, h('td', {}, b.label), h('td', { class: 'num' }, b.shown))),
        ),
      ),
    ),
  );
}
