import { link } from '../components/bits';
import { barChart } from '../components/bar-chart';
import { age, count, money } from '../components/format';
import { table } from '../components/table';
import { timeChart } from '../components/time-chart';
import { h } from '../dom';
import type { DashboardNowView, DashboardView } from '../replies';

/** The dashboard's panels, each drawn from one part of the reply (dashboard.ts lays them out). */

const BLUE = '#1f5fbf';
const GREEN = '#146c2e';
const RED = '#b42318';
const AMBER = '#9a6700';
const PURPLE = '#6f42c1';

/** A lag past this many seconds is drawn in the warning colour: the read models are behind by more than a person waits. */
const LAG_ALARM_SECONDS = 60;

const sum = (values: readonly (number | null)[]) => values.reduce<number>((total, v) => total + (v ?? 0), 0);
/** Milliseconds, whole: the axis says `ms`. */
const ms = (value: number) => Math.round(value).toLocaleString('en');
const waited = (seconds: number | null) => (seconds === null ? 'none waiting' : `oldest waiting ${age(seconds)}`);

/** How the window is named in sentences. */
export const windowName = (d: DashboardView) => (d.window === '1h' ? 'the last hour' : 'the last 24 hours');

/** Orders per slot by outcome: accepted (the money frozen), then succeeded, failed, or unknown (into the queue). */
export function ordersChart(d: DashboardView) {
  const pick = (key: 'accepted' | 'success' | 'failed' | 'unknown') => d.series.map((p) => p.orders[key]);
  const totals = { refused: sum(d.series.map((p) => p.orders.refused)), resolved: sum(d.series.map((p) => p.orders.resolved)) };
  const series = [
    { label: 'accepted', values: pick('accepted'), colour: BLUE },
    { label: 'success', values: pick('success'), colour: GREEN, dash: '7 3' },
    { label: 'failed', values: pick('failed'), colour: RED, dash: '2 3' },
    { label: 'unknown', values: pick('unknown'), colour: AMBER, dash: '9 3 2 3' },
  ].map((s) => ({ ...s, note: `(${sum(s.values)})` }));
  return timeChart({
    id: 'chart-orders',
    title: `Orders per ${d.step_seconds === 60 ? 'minute' : `${d.step_seconds / 60} minutes`} by outcome`,
    kind: 'line',
    times: d.series.map((p) => p.at),
    stepSeconds: d.step_seconds,
    series,
    unit: 'orders',
    integer: true,
    summary:
      `In ${windowName(d)}: ${series.map((s) => `${sum(s.values)} ${s.label}`).join(', ')}; ` +
      `${count(totals.refused, 'submit')} refused, ${totals.resolved} resolved by a clerk.`,
    empty: `No order in ${windowName(d)}.`,
  });
}

/** The upstream's latency, send to answer: the median and the 99th percentile of each slot. */
export function latencyChart(d: DashboardView) {
  const p50 = d.series.map((p) => p.upstream.latency_ms.p50);
  const p99 = d.series.map((p) => p.upstream.latency_ms.p99);
  const worst = p99.reduce<number | null>((m, v) => (v !== null && (m === null || v > m) ? v : m), null);
  const latest = [...d.series].reverse().find((p) => p.upstream.latency_ms.p50 !== null);
  return timeChart({
    id: 'chart-latency',
    title: 'Upstream latency',
    kind: 'line',
    times: d.series.map((p) => p.at),
    stepSeconds: d.step_seconds,
    series: [
      { label: 'p50', values: p50, colour: BLUE },
      { label: 'p99', values: p99, colour: RED, dash: '7 3' },
    ],
    unit: 'ms',
    format: ms,
    summary:
      worst === null
        ? ''
        : `Highest p99 in ${windowName(d)}: ${ms(worst)} ms; latest p50 ${ms(latest?.upstream.latency_ms.p50 ?? 0)} ms. Estimated from a histogram, to within its bucket.`,
    empty: `No answer from the upstream in ${windowName(d)}.`,
  });
}

/** What the upstream answered, slot by slot, stacked: the parts of every send. */
export function answersChart(d: DashboardView) {
  const pick = (key: 'delivered' | 'refused' | 'unknown' | 'retried') => d.series.map((p) => p.upstream[key]);
  const series = [
    { label: 'delivered', values: pick('delivered'), colour: GREEN },
    { label: 'refused', values: pick('refused'), colour: RED },
    { label: 'unknown', values: pick('unknown'), colour: AMBER },
    { label: 'no answer, retried', values: pick('retried'), colour: PURPLE },
  ].map((s) => ({ ...s, note: `(${sum(s.values)})` }));
  return timeChart({
    id: 'chart-answers',
    title: 'Upstream answers',
    kind: 'stacked',
    times: d.series.map((p) => p.at),
    stepSeconds: d.step_seconds,
    series,
    unit: 'answers',
    integer: true,
    summary: `${sum(d.series.map((p) => p.upstream.sent))} sent in ${windowName(d)}: ${series.map((s) => `${sum(s.values)} ${s.label}`).join(', ')}.`,
    empty: `Nothing sent upstream in ${windowName(d)}.`,
  });
}

/** The share of callback attempts the merchants acknowledged, and the callbacks waiting now. */
export function callbacksChart(d: DashboardView) {
  const acknowledged = sum(d.series.map((p) => p.callbacks.acknowledged));
  const finished = acknowledged + sum(d.series.map((p) => p.callbacks.not_acknowledged));
  const backlog = d.now.callbacks;
  const section = timeChart({
    id: 'chart-callbacks',
    title: 'Callbacks acknowledged',
    kind: 'line',
    times: d.series.map((p) => p.at),
    stepSeconds: d.step_seconds,
    series: [
      {
        label: 'acknowledged',
        values: d.series.map((p) => (p.callbacks.acknowledged_ratio === null ? null : p.callbacks.acknowledged_ratio * 100)),
        colour: BLUE,
      },
    ],
    unit: '%',
    format: (v) => v.toFixed(0),
    top: 100,
    summary:
      finished === 0
        ? ''
        : `${acknowledged} of ${count(finished, 'attempt')} with a result in ${windowName(d)} acknowledged (${((acknowledged / finished) * 100).toFixed(1)} %).`,
    empty: `No callback attempt with a result in ${windowName(d)}.`,
  });
  section.append(
    h('p', { id: 'callback-backlog' }, `Backlog now: ${backlog.pending} pending, ${backlog.exhausted} gave up, ${waited(backlog.oldest_pending_age_seconds)}.`),
  );
  return section;
}

/** Each projection's lag behind the log, now. */
export function lagChart(now: DashboardNowView) {
  const behind = now.projections.filter((p) => p.events_behind > 0);
  return barChart({
    id: 'chart-lag',
    title: 'Projection lag',
    bars: now.projections.map((p) => ({
      label: p.name,
      value: p.events_behind,
      shown: `${p.events_behind_at_least ? '≥ ' : ''}${count(p.events_behind, 'event')}, ${p.lag_seconds.toFixed(1)} s`,
      alarm: p.events_behind_at_least || p.lag_seconds > LAG_ALARM_SECONDS,
    })),
    unit: 'Behind the log',
    summary: behind.length === 0 ? 'Every projection is caught up with the log.' : `${behind.map((p) => `${p.name} ${p.events_behind} behind`).join(', ')}.`,
    empty: 'No projection reported.',
  });
}

/** The work waiting now: the reconciliation queue, and fulfilment. */
export function queuesPanel(now: DashboardNowView) {
  const r = now.reconciliation;
  return h(
    'section',
    { id: 'queues', class: 'dash-chart', 'aria-labelledby': 'queues-title' },
    h('h2', { id: 'queues-title' }, 'Queues now'),
    h(
      'dl',
      { class: 'dash-tiles' },
      h('div', {}, h('dt', {}, 'Unknown results'), h('dd', { id: 'queue-size' }, String(r.unknown_result_orders))),
      h('div', {}, h('dt', {}, 'Oldest waiting'), h('dd', { id: 'queue-oldest' }, r.oldest_age_seconds === null ? '—' : age(r.oldest_age_seconds))),
      h('div', {}, h('dt', {}, 'Fulfilment pending'), h('dd', {}, String(now.fulfilment.pending))),
      h('div', {}, h('dt', {}, 'Callbacks pending'), h('dd', {}, String(now.callbacks.pending))),
    ),
    h(
      'p',
      {},
      r.oldest_order_no ? ['The oldest: ', link(`#/order/${r.oldest_order_no}`, r.oldest_order_no), '. '] : 'Nothing waits for a clerk. ',
      link('#/queue', 'The reconciliation queue'),
    ),
  );
}

/** Merchants under their low-balance threshold, the furthest under first: ask them for a deposit. */
export function lowBalancePanel(now: DashboardNowView) {
  const { total, merchants } = now.low_balance;
  return h(
    'section',
    { id: 'low-balance', class: 'dash-chart wide', 'aria-labelledby': 'low-balance-title' },
    h('h2', { id: 'low-balance-title' }, 'Low balances'),
    h(
      'p',
      { class: 'muted' },
      total === 0
        ? 'No merchant is under its low-balance threshold.'
        : `${count(total, 'merchant')} under the threshold set for each, the furthest under first${total > merchants.length ? `; the first ${merchants.length} shown` : ''}.`,
    ),
    total > 0 &&
      table(
        [
          ['Merchant', (m) => link(`#/merchant/${m.merchant_id}`, m.name)],
          ['Available', (m) => money(m.available_balance, m.currency), 'num'],
          ['Threshold', (m) => money(m.low_balance_threshold, m.currency), 'num'],
        ],
        merchants,
      ),
  );
}
