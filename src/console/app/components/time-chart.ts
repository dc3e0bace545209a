import { h, svg } from '../dom';
import { BOX, clock, plotWidth, swatch, timeAxis, valueAxis, valueScale } from './chart-scale';

/** One series: a name, a value per slot (null where there is none), and how it is drawn. */
export interface ChartSeries {
  label: string;
  values: readonly (number | null)[];
  colour: string;
  /** A line's dash pattern, so series differ by more than colour. */
  dash?: string;
  /** Said after the label in the legend: a total, a median. */
  note?: string;
}

export interface TimeChartSpec {
  /** The chart's id (its section's); its parts are named from it. */
  id: string;
  title: string;
  /** Lines, or bars stacked slot by slot (for parts of one whole). */
  kind: 'line' | 'stacked';
  /** Each slot's start (ISO 8601, UTC), oldest first. */
  times: readonly string[];
  stepSeconds: number;
  series: readonly ChartSeries[];
  /** What the values are counted in, over the value axis and in the table's heads. */
  unit: string;
  format?: (value: number) => string;
  /** Whole numbers only on the value axis (counts). */
  integer?: boolean;
  /** A fixed top for the value axis (1 for a ratio). */
  top?: number;
  /** What the chart says, in one sentence: its accessible name goes on with it. */
  summary: string;
  /** Said instead of the chart when no slot has a value. */
  empty: string;
}

const plain = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/**
 * A chart of a window's slots: multi-series lines or stacked bars, a value
 * axis, the time axis in UTC, a legend, and the same figures as a table in a
 * <details> for whoever does not see the picture. The SVG's accessible name
 * is the title and the summary. Every mark has a <title> with its slot and
 * value, shown when pointed at.
 */
export function timeChart(spec: TimeChartSpec): HTMLElement {
  const format = spec.format ?? plain;
  const slots = spec.times.map((t) => Date.parse(t));
  const hasData = spec.series.some((s) => s.values.some((v) => v !== null && v !== 0));
  const heading = h('h2', { id: `${spec.id}-title` }, spec.title);
  if (!hasData || slots.length === 0) return h('section', { id: spec.id, class: 'dash-chart empty' }, heading, h('p', { class: 'muted' }, spec.empty));

  const n = slots.length;
  const band = plotWidth / n;
  const xOfSlot = (i: number) => BOX.left + (i + 0.5) * band;
  const stacks = slots.map((_, i) => spec.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = spec.kind === 'stacked' ? Math.max(0, ...stacks) : Math.max(0, ...spec.series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const scale = valueScale(max, spec.integer ?? false, spec.top);
  const markTitle = (s: ChartSeries, i: number, v: number) => svg('title', {}, `${clock(slots[i])} UTC: ${s.label} ${format(v)} ${spec.unit}`);

  const marks =
    spec.kind === 'stacked'
      ? slots.map((_, i) => {
          let base = 0;
          const width = Math.max(1, band - Math.min(2, band * 0.2));
          return svg(
            'g',
            { class: 'slot' },
            spec.series.map((s) => {
              const v = s.values[i] ?? 0;
              if (v === 0) return null;
              const y0 = scale.y(base);
              base += v;
              const y1 = scale.y(base);
              return svg(
                'rect',
                { x: xOfSlot(i) - width / 2, y: y1, width, height: Math.max(0.5, y0 - y1), fill: s.colour, 'data-series': s.label, 'data-value': v },
                markTitle(s, i, v),
              );
            }),
          );
        })
      : spec.series.map((s) =>
          svg(
            'g',
            { class: 'series', 'data-series': s.label },
            runs(s.values).map((run) => line(s, run, xOfSlot, scale.y, markTitle)),
          ),
        );

  const picture = svg(
    'svg',
    { viewBox: `0 0 ${BOX.width} ${BOX.height}`, role: 'img', 'aria-labelledby': `${spec.id}-title ${spec.id}-summary`, class: 'dash-svg' },
    valueAxis(scale, format, spec.unit),
    timeAxis(slots[0], n, spec.stepSeconds, xOfSlot),
    marks,
  );
  const legend = h(
    'ul',
    { class: 'dash-legend', 'aria-label': `${spec.title}: legend` },
    spec.series.map((s) =>
      h('li', {}, swatch(s.colour, spec.kind === 'line' ? 'line' : 'block', s.dash), s.label, s.note && h('span', { class: 'muted' }, ` ${s.note}`)),
    ),
  );
  return h(
    'section',
    { id: spec.id, class: 'dash-chart', 'aria-labelledby': `${spec.id}-title` },
    heading,
    h('p', { id: `${spec.id}-summary`, class: 'muted dash-summary' }, spec.summary),
    picture,
    legend,
    figures(spec, slots, format),
  );
}

/** The series' unbroken runs of values: a null (no figure for the slot) breaks the line. */
function runs(values: readonly (number | null)[]): [index: number, value: number][][] {
  const out: [number, number][][] = [];
  let current: [number, number][] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length) out.push(current);
      current = [];
    } else current.push([i, v]);
  });
  if (current.length) out.push(current);
  return out;
}

function line(
  s: ChartSeries,
  run: [number, number][],
  x: (i: number) => number,
  y: (v: number) => number,
  markTitle: (s: ChartSeries, i: number, v: number) => SVGTitleElement,
) {
  const points = run.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  return [
    run.length > 1 && svg('polyline', { points, fill: 'none', stroke: s.colour, 'stroke-width': 2, 'stroke-dasharray': s.dash, 'stroke-linejoin': 'round' }),
    // A point marks a slot with something in it (or a run of one); zeros are the line alone.
    run
      .filter(([, v]) => v !== 0 || run.length === 1)
      .map(([i, v]) => svg('circle', { cx: x(i), cy: y(v), r: run.length > 1 ? 1.8 : 3, fill: s.colour, 'data-value': v }, markTitle(s, i, v))),
  ];
}

/** The chart's figures as a table: a row per slot that has any, newest first. */
function figures(spec: TimeChartSpec, slots: readonly number[], format: (value: number) => string) {
  const rows = slots
    .map((t, i) => ({ t, values: spec.series.map((s) => s.values[i]) }))
    .filter((r) => r.values.some((v) => v !== null && v !== 0))
    .reverse();
  return h(
    'details',
    { class: 'dash-figures' },
    h('summary', {}, `${spec.title}: the figures`),
    h(
      'table',
      {},
      h(
        'caption',
        { class: 'muted' },
        `Slots of ${spec.stepSeconds / 60} min starting at the time shown (UTC), newest first; slots with nothing are left out.`,
      ),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Slot (UTC)'),
          spec.series.map((s) => h('th', { scope: 'col', class: 'num' }, `${s.label} (${spec.unit})`)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            h('td', {}, new Date(r.t).toISOString().slice(0, 16).replace('T', ' ')),
            r.values.map((v) => h('td', { class: 'num' }, v === null || v === undefined ? '—' : format(v))),
          ),
        ),
      ),
    ),
  );
}
