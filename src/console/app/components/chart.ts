import { h, svg } from '../dom';
import type { StatementLine } from '../replies';
import { time } from './format';

const W = 900;
const H = 220;
const PAD = 40;

/**
 * Balance (solid) and frozen (dashed) over the time of a page of statement
 * lines, as steps: each amount holds until the next event changes it. SVG by
 * hand, no chart library.
 */
export function balanceChart(lines: readonly StatementLine[]): HTMLElement {
  if (lines.length === 0) return h('p', { class: 'muted' }, 'No line to draw.');
  const times = lines.map((l) => Date.parse(l.recorded_at));
  const t0 = times[0];
  const t1 = Math.max(times[times.length - 1], t0 + 1);
  const max = Math.max(1, ...lines.map((l) => Number(l.balance_after)), ...lines.map((l) => Number(l.frozen_after)));
  const x = (t: number) => PAD + ((t - t0) * (W - 2 * PAD)) / (t1 - t0);
  const y = (v: number) => H - PAD + 10 - (v / max) * (H - 2 * PAD);
  const steps = (field: 'balance_after' | 'frozen_after') =>
    lines
      .flatMap((l, i): [number, number][] => [...(i > 0 ? [[times[i], Number(lines[i - 1][field])] as [number, number]] : []), [times[i], Number(l[field])]])
      .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ');
  return h(
    'div',
    {},
    svg(
      'svg',
      { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Balance and frozen amount over time' },
      svg('line', { class: 'axis', x1: PAD, y1: y(0), x2: W - PAD, y2: y(0) }),
      svg('line', { class: 'axis', x1: PAD, y1: y(max), x2: W - PAD, y2: y(max) }),
      svg('text', { x: 2, y: y(max) + 4 }, max.toFixed(2)),
      svg('text', { x: 2, y: y(0) + 4 }, '0.00'),
      svg('text', { x: PAD, y: H - 4 }, time(lines[0].recorded_at)),
      svg('text', { x: W - PAD, y: H - 4, 'text-anchor': 'end' }, time(lines[lines.length - 1].recorded_at)),
      svg('polyline', { class: 'balance', points: steps('balance_after') }),
      svg('polyline', { class: 'frozen', points: steps('frozen_after') }),
    ),
    h(
      'p',
      { class: 'legend' },
      h('span', { class: 'balance' }, '— balance'),
      '   ',
      h('span', { class: 'frozen' }, '- - frozen'),
      h('span', { class: 'muted' }, '   (the lines of this page, over their recorded time)'),
    ),
  );
}
