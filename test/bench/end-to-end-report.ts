/** The end-to-end phase's printout and the figures its targets are checked on. */
import os from 'node:os';
import { EndToEnd, EndToEndPhase } from './end-to-end';
import { percentile } from './load-generator';
import { CoresUsed, otherCores } from './processes';
import { Settings } from './settings';
import { Spread, table } from './tables';
import { atLeast, atMost, Check } from './targets';

/** How many of the (ascending) times fall in (fromMs, toMs]. */
const within = (times: number[], fromMs: number, toMs: number) => times.filter((t) => t > fromMs && t <= toMs).length;

/** Orders final in the read model at `ms`, as last sampled by then. */
const readModelAt = (e: EndToEnd, ms: number) => [...e.timeline.readModel].reverse().find(([at]) => at <= ms)?.[1] ?? 0;

export interface EndToEndFigures {
  during: { accepted: number; final: number; calledBack: number };
  /** Per second over the drain (or the wait for it). */
  after: { final: number; calledBack: number; seconds: number };
  /**
   * Submits answered 202 while the load was being sent, per submit offered:
   * below 1 when the service falls behind the offered rate (the open loop's
   * connections are all waiting, and "during the load" stretches to the last
   * reply), so completion keeping up with a slower acceptance is not mistaken
   * for keeping up with the load.
   */
  acceptedPerOffered: number;
  /**
   * Orders final in a window as long as the load, the upstream's delay
   * later, per order accepted during the load. No order is final before the
   * upstream answers: over the load itself even a service that kept up
   * would show at most 1 − delay ÷ load (0.98 for 10 s at 200 ms).
   */
  finalPerAccepted: number;
  calledBackPerFinal: number;
  p50: number;
  p99: number;
  nonOk: number;
}

export function endToEndFigures(e: EndToEnd): EndToEndFigures {
  const { accepted, final, calledBack } = e.timeline;
  const loadS = e.loadMs / 1000;
  const afterMs = e.drainMs ?? e.waitedMs;
  const rate = (times: number[], from: number, to: number) => within(times, from, to) / ((to - from) / 1000);
  return {
    during: {
      accepted: within(accepted, -1, e.loadMs) / loadS,
      final: within(final, -1, e.loadMs) / loadS,
      calledBack: within(calledBack, -1, e.loadMs) / loadS,
    },
    after: { final: rate(final, e.loadMs, e.loadMs + afterMs), calledBack: rate(calledBack, e.loadMs, e.loadMs + afterMs), seconds: afterMs / 1000 },
    acceptedPerOffered: within(accepted, -1, e.sendMs) / Math.max(1, (e.ratePerS * e.sendMs) / 1000),
    finalPerAccepted: within(final, e.upstreamDelayMs, e.loadMs + e.upstreamDelayMs) / Math.max(1, within(accepted, -1, e.loadMs)),
    calledBackPerFinal: within(calledBack, -1, e.loadMs) / Math.max(1, within(final, -1, e.loadMs)),
    p50: percentile(e.result.latenciesMs, 50),
    p99: percentile(e.result.latenciesMs, 99),
    nonOk: [...e.result.failures.values()].reduce((a, b) => a + b, 0),
  };
}

/** Who used the cores in a window of the phase. */
function whoUsedTheCores(c: CoresUsed): string {
  return `service ${c.server.toFixed(2)}, Postgres ${c.postgres.toFixed(2)}, load generator ${c.bench.toFixed(2)}, upstream and receiver ${c.peers.toFixed(2)}`;
}

export function endToEndSection(settings: Settings, e: EndToEnd): string[] {
  const f = endToEndFigures(e);
  const { accepted, final, calledBack } = e.timeline;
  const drain = e.drainMs !== undefined ? `${(e.drainMs / 1000).toFixed(1)} s` : `not within ${settings.drainMaxS} s`;
  const cores = (c: EndToEnd['coresDuringLoad']) =>
    c
      ? `${whoUsedTheCores(c)}, other ${otherCores(c).toFixed(2)}` +
        (c.mainThread
          ? ` (the service's main thread ran ${c.mainThread.running.toFixed(2)} of the time and waited for a CPU ${c.mainThread.waiting.toFixed(2)})`
          : '')
      : 'n/a';
  const atLoadEnd = (times: number[]) => within(times, -1, e.loadMs);
  const warmup =
    e.warmupS === 0
      ? 'no warm-up'
      : `a ${e.warmupS} s warm-up before, whose orders ${e.warmupDrainMs === undefined ? 'had NOT all finished' : `had all finished ${(e.warmupDrainMs / 1000).toFixed(1)} s after it`}`;
  return [
    `End to end: the service with its defaults (fulfilment on; the upstream the simulator in a process of its own, delay ${e.upstreamDelayMs} ms; callbacks to a receiver ` +
      `in a process of its own), ${settings.merchants} merchants; open loop at ${e.ratePerS.toFixed(0)}/s (${e.basis}), ` +
      `sent for ${(e.sendMs / 1000).toFixed(1)} s, the last reply ${(e.loadMs / 1000).toFixed(1)} s after the first request ("the load" below); ${warmup}. ` +
      'Final: the time of the final event (completed_at); called back: the first acknowledged callback.',
    '',
    ...table(
      ['', 'accepted/s', 'final/s', 'called back/s'],
      [
        ['during the load', f.during.accepted.toFixed(1), f.during.final.toFixed(1), f.during.calledBack.toFixed(1)],
        [`after it, ${f.after.seconds.toFixed(1)} s`, '-', f.after.final.toFixed(1), f.after.calledBack.toFixed(1)],
      ],
    ),
    '',
    `At the last reply: ${atLoadEnd(accepted)} accepted, ${atLoadEnd(final)} final (${readModelAt(e, e.loadMs)} of them final in the read model), ` +
      `${atLoadEnd(calledBack)} called back. Drained (every accepted order final and called back): ${drain}; ` +
      `in the end ${final.length} final, ${calledBack.length} called back of ${accepted.length}.`,
    `Submits (latency from the moment each was due): p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms, non-2xx ${f.nonOk}; ` +
      `the longest a submit waited with no reply of any kind coming meanwhile ${e.result.longestSilenceMs.toFixed(1)} ms.`,
    ...insideTheService(settings, e, f),
    `Cores during the load: ${cores(e.coresDuringLoad)}; after it: ${cores(e.coresDuringDrain)}.`,
    `Service + Postgres CPU per order over its whole life (load and drain): ${e.cpuMsPerOrder === undefined ? 'n/a' : `${e.cpuMsPerOrder.toFixed(2)} ms`}; ` +
      `the upstream and the receiver, per order: ${e.peersMsPerOrder === undefined ? 'n/a' : `${e.peersMsPerOrder.toFixed(2)} ms`}.`,
    '',
    'Per second during the load, then per 5 s (orders in that span; "read model": final as a query shows it; backlog: accepted, not yet final):',
    '',
    ...table(['until s', 'accepted', 'final', 'read model', 'called back', 'backlog'], timelineRows(e)),
  ];
}

/**
 * The open loop sends over at most --concurrency connections, so it cannot
 * be answered faster than connections ÷ the time of one exchange, and the
 * service's own time per submit is a floor under that time.
 */
function insideTheService(settings: Settings, e: EndToEnd, f: EndToEndFigures): string[] {
  const s = e.serverSide;
  if (!s) return [];
  const bound = (settings.concurrency * 1000) / s.submitMs;
  const append = Number.isFinite(s.appendMs) ? ` An append took ${s.appendMs.toFixed(1)} ms from being asked to its commit.` : '';
  return [
    `Inside the service during the load (its /metrics): a submit took ${s.submitMs.toFixed(1)} ms from arrival to reply on average, ` +
      `so the load's ${settings.concurrency} connections could carry at most ${bound.toFixed(0)} submits a second (offered ${e.ratePerS.toFixed(0)}/s, ` +
      `accepted ${f.during.accepted.toFixed(0)}/s); the rest of each exchange is spent outside the handlers ` +
      `(socket queues while the event loop is busy or waits for a CPU, the load generator).${append}`,
    `Submits over ${s.submitsOver.map(({ ms }) => `${ms}`).join(', ')} ms: inside the service ${s.submitsOver.map(({ share }) => percent(share)).join(', ')}; ` +
      `as the load generator saw them (from when each was due) ${s.submitsOver.map(({ ms }) => percent(shareOver(e.result.latenciesMs, ms))).join(', ')}.`,
  ];
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The share of the (ascending) latencies above `ms`. */
function shareOver(latenciesMs: Float64Array, ms: number): number {
  const firstOver = latenciesMs.findIndex((latency) => latency > ms);
  return firstOver === -1 ? 0 : (latenciesMs.length - firstOver) / latenciesMs.length;
}

function timelineRows(e: EndToEnd): string[][] {
  const { accepted, final, calledBack } = e.timeline;
  const endMs = e.loadMs + (e.drainMs ?? e.waitedMs);
  const rows: string[][] = [];
  for (let from = 0; from < endMs;) {
    const to = Math.min(endMs, from < e.loadMs ? Math.floor(from / 1000) * 1000 + 1000 : from + 5000);
    const after = from === 0 ? -1 : from; // the first span includes 0
    rows.push([
      (to / 1000).toFixed(to % 1000 === 0 ? 0 : 1),
      String(within(accepted, after, to)),
      String(within(final, after, to)),
      String(readModelAt(e, to) - readModelAt(e, from)),
      String(within(calledBack, after, to)),
      String(within(accepted, -1, to) - within(final, -1, to)),
    ]);
    from = to;
  }
  return rows;
}

/** Steady's figures (medians): what the submit path alone costs at about the first end-to-end load's rate. */
export interface SubmitOnly {
  /** Service + Postgres CPU per accepted submit. */
  cpuMs: number;
  ratePerS: number;
  /** The load generator's cores while it sent them. */
  loadGeneratorCores: number;
}

/**
 * The closed loop with fulfilment and callbacks on, and what a whole order
 * costs against a submit alone in "steady", an open loop at the rate the
 * first end-to-end load has by default (a submit at the maximum costs less:
 * its statements carry more submits each): why a load at a fraction of the
 * submit-only maximum can be more than the machine completes. Then what that
 * load takes of the machine before the service does anything to complete an
 * order: its submits, the load generator, and the upstream and the receiver.
 */
export function whileCompletingSection(settings: Settings, phase: EndToEndPhase, submitOnly: SubmitOnly): string[] {
  const lines: string[] = [];
  const c = phase.completing;
  if (c) {
    const drain =
      c.drainMs !== undefined
        ? `its orders were all final and called back ${(c.drainMs / 1000).toFixed(1)} s after it`
        : `its orders were NOT all final within ${settings.drainMaxS} s`;
    lines.push(
      `The closed loop while completing orders (concurrency ${settings.concurrency}, ${settings.durationS} s measured after ${settings.warmupS} s): ` +
        `${c.acceptedPerS.toFixed(0)} accepted a second; ${c.finalPerS.toFixed(0)} a second of them became final within the same window ` +
        `(${(c.finalPerS / c.acceptedPerS).toFixed(2)} of accepted${c.finalPerS < 0.95 * c.acceptedPerS ? ': a backlog grew, which the service works off only once the load eases' : ''}); ${drain}. ` +
        `Cores in the window: ${c.cores ? whoUsedTheCores(c.cores) : 'n/a'}.`,
    );
  }
  const first = phase.loads[0];
  const machine = os.cpus().length;
  if (first?.cpuMsPerOrder !== undefined && Number.isFinite(submitOnly.cpuMs)) {
    const cores = (first.ratePerS * first.cpuMsPerOrder) / 1000;
    lines.push(
      `A whole order, fulfilled and called back, cost the service and Postgres ${first.cpuMsPerOrder.toFixed(2)} ms of CPU (the first load above, load and drain); ` +
        `a submit alone ${submitOnly.cpuMs.toFixed(2)} ms in "steady" (open loop at ${submitOnly.ratePerS.toFixed(0)}/s, median): ` +
        `${(first.cpuMsPerOrder / submitOnly.cpuMs).toFixed(2)} times as much. Taking and completing the first load's ${first.ratePerS.toFixed(0)} orders a second ` +
        `at that cost needs ${cores.toFixed(2)} cores for the service and Postgres alone, of the machine's ${machine}, ` +
        'which the load generator, the upstream and the receiver share.',
    );
  }
  if (first?.peersMsPerOrder !== undefined && [submitOnly.cpuMs, submitOnly.ratePerS, submitOnly.loadGeneratorCores].every(Number.isFinite)) {
    const rate = first.ratePerS;
    const submits = (rate * submitOnly.cpuMs) / 1000;
    const sending = (submitOnly.loadGeneratorCores * rate) / submitOnly.ratePerS;
    const peers = (rate * first.peersMsPerOrder) / 1000;
    lines.push(
      `Even if fulfilling and calling back cost the service and Postgres nothing, the first load's ${rate.toFixed(0)} orders a second would take ` +
        `${(submits + sending + peers).toFixed(2)} cores of the machine's ${machine}: their submits ${submits.toFixed(2)} (the service and Postgres at steady's cost), ` +
        `the load generator ${sending.toFixed(2)} (steady's, at that rate), and the upstream and the receiver ${peers.toFixed(2)} ` +
        `(${first.peersMsPerOrder.toFixed(2)} ms an order; in production they run on machines of their own).`,
    );
  }
  return lines;
}

/** Below this share of the offered rate, a load was not carried. */
const CARRIED = 0.95;

/**
 * The end-to-end targets of one load. Its submits' p99 ÷ p50 is judged only
 * when the service took the load (accepted ÷ offered at least 0.95): behind a
 * backlog that grows for the whole load every submit waits seconds, and the
 * ratio of two such waits says nothing about the tail.
 */
export function endToEndChecks(load: EndToEnd): Check[] {
  const f = endToEndFigures(load);
  const one = (v: number) => new Spread([v]);
  const phase = load.label;
  const carried = f.acceptedPerOffered >= CARRIED;
  return [
    {
      what: `${phase}: p99 ÷ p50 of the submits`,
      target: '≤ 4',
      ok: atMost(4),
      service: one(f.p99 / f.p50),
      digits: 2,
      notJudged: carried ? undefined : 'not judged: load not carried',
    },
    { what: `${phase}: non-2xx`, target: '0', ok: (v) => v === 0, service: one(f.nonOk), digits: 0 },
    { what: `${phase}: accepted while sending ÷ offered`, target: `≥ ${CARRIED}`, ok: atLeast(CARRIED), service: one(f.acceptedPerOffered), digits: 3 },
    {
      what: `${phase}: final/s (${load.upstreamDelayMs} ms later) ÷ accepted/s during the load`,
      target: '≥ 0.95',
      ok: atLeast(0.95),
      service: one(f.finalPerAccepted),
      digits: 3,
    },
    { what: `${phase}: called back ÷ final during the load`, target: '≥ 0.95', ok: atLeast(0.95), service: one(f.calledBackPerFinal), digits: 3 },
    {
      what: `${phase}: drain time after the load, s`,
      target: '≤ 5',
      ok: atMost(5),
      service: one(load.drainMs === undefined ? Infinity : load.drainMs / 1000),
      digits: 1,
    },
  ];
}
