import { svg } from '../dom';

/**
 * What the dashboard's charts share: the plot's box, a value axis with
 * round ticks, and a time axis labelled in UTC. Drawn with DOM calls
 * (dom.ts), styled with SVG's presentation attributes, which the
 * Content-Security-Policy does not govern as it does style attributes.
 */

/** The plot's box in the SVG's own units: the SVG scales to its container. */
export const BOX = { width: 560, height: 220, left: 52, right: 14, top: 26, bottom: 30 } as const;
export const plotWidth = BOX.width - BOX.left - BOX.right;
export const plotHeight = BOX.height - BOX.top - BOX.bottom;

export const INK = '#5d6778';
const GRID = '#d8dde5';

/** 1, 2 or 5 times a power of ten, at least `raw`: a step a person reads at a glance. */
function roundStep(raw: number, integer: boolean): number {
  if (raw <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return integer ? Math.max(1, Math.ceil(step)) : step;
}

/** A value axis from 0 to a round top over `max`, with four or five ticks. */
export function valueScale(max: number, integer: boolean, fixedTop?: number) {
  const step = fixedTop !== undefined ? fixedTop / 4 : roundStep(Math.max(max, integer ? 1 : Number.EPSILON) / 4, integer);
  const top = fixedTop ?? Math.max(step, Math.ceil(max / step) * step);
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const y = (value: number) => BOX.top + plotHeight - (Math.min(value, top) / top) * plotHeight;
  return { top, ticks, y };
}

/** Horizontal grid lines with their values, and the axis's unit above them. */
export function valueAxis(scale: ReturnType<typeof valueScale>, format: (value: number) => string, unit: string): SVGGElement {
  return svg(
    'g',
    { class: 'value-axis', 'aria-hidden': 'true' },
    scale.ticks.map((tick) => [
      svg('line', { x1: BOX.left, x2: BOX.width - BOX.right, y1: scale.y(tick), y2: scale.y(tick), stroke: GRID, 'stroke-width': 1 }),
      svg('text', { x: BOX.left - 6, y: scale.y(tick) + 4, 'text-anchor': 'end', fill: INK, 'font-size': 11 }, format(tick)),
    ]),
    svg('text', { x: 4, y: 12, fill: INK, 'font-size': 11 }, unit),
  );
}

/** Intervals between labelled times, in seconds: the first that gives at most seven labels is used. */
const TIME_TICKS = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200];

/** `10:50`, in UTC: every time the console shows is UTC. */
export const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** The time axis under `count` slots of `stepSeconds` from `first`: labels on round UTC times, and `UTC` at its end. */
export function timeAxis(first: number, count: number, stepSeconds: number, xOfSlot: (index: number) => number): SVGGElement {
  const span = count * stepSeconds;
  const every = TIME_TICKS.find((t) => span / t <= 7 && t % stepSeconds === 0) ?? span;
  const base = BOX.top + plotHeight;
  const labelled = Array.from({ length: count }, (_, i) => i).filter((i) => (first / 1000 + i * stepSeconds) % every === 0);
  return svg(
    'g',
    { class: 'time-axis', 'aria-hidden': 'true' },
    svg('line', { x1: BOX.left, x2: BOX.width - BOX.right, y1: base, y2: base, stroke: INK, 'stroke-width': 1 }),
    labelled.map((i) => [
      svg('line', { x1: xOfSlot(i), x2: xOfSlot(i), y1: base, y2: base + 4, stroke: INK, 'stroke-width': 1 }),
      svg('text', { x: xOfSlot(i), y: base + 16, 'text-anchor': 'middle', fill: INK, 'font-size': 11 }, clock(first + i * stepSeconds * 1000)),
    ]),
    svg('text', { x: BOX.width - BOX.right, y: base + 28, 'text-anchor': 'end', fill: INK, 'font-size': 10 }, 'UTC'),
  );
}

/** A small sample of a series' mark for its legend: a line (dashed as drawn) or a block. */
export const swatch = (colour: string, kind: 'line' | 'block', dash?: string) =>
  svg(
    'svg',
    { width: 26, height: 10, viewBox: '0 0 26 10', 'aria-hidden': 'true', class: 'swatch' },
    kind === 'line'
      ? svg('line', { x1: 1, x2: 25, y1: 5, y2: 5, stroke: colour, 'stroke-width': 3, 'stroke-dasharray': dash })
      : svg('rect', { x: 4, y: 0, width: 18, height: 10, fill: colour }),
  );
