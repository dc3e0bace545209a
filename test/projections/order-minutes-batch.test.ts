import { LedgerEvent } from '../../projections/ledger-event';
import { orderMinutesProjection, UPSTREAM_LATENCY_BOUNDS_MS } from '../../projections/order-minutes.projection';
import { TableNames } from '../../projections/projection';
import { inlineStatements } from '../../projections/statement-batch';
import { at, interleaved, order, orderLives, OrderSpec, placed } from '../support/order-lives';
import { projectionCases } from '../support/projection-cases';

const time = (minute: number, second: number, ms = 0) =>
  `2026-11-25T10:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.${String(ms).padStart(3, '0')}+00:00`;
const accepted = (orderNo: string, when: string) => order(orderNo, { type: 'OrderAccepted', data: { attempt: 1, at: when } });
const sent = (orderNo: string, n: number, when: string) => order(orderNo, { type: 'OrderSentUpstream', data: { upstreamAttempt: n, at: when } });

/**
 * The service's order lives (order-lives.ts), and those only the upstream's
 * side tells apart: sent three times (two sends without a definitive
 * answer), its answer in the next minute; released for want of a route
 * without a send; given up after a send that got no answer; and one still
 * waiting for its answer.
 */
function lives(): OrderSpec[][] {
  return [
    ...orderLives(),
    [
      placed('F', 1, at(0)),
      accepted('F', at(1)),
      sent('F', 1, time(0, 40)),
      sent('F', 2, time(0, 50)),
      sent('F', 3, time(0, 55)),
      order('F', { type: 'OrderDeliveryConfirmed', data: { at: time(1, 0, 250) } }),
      order('F', { type: 'OrderSucceeded', data: { at: time(1, 0, 300) } }),
    ],
    [
      placed('G', 1, at(0)),
      accepted('G', at(1)),
      order('G', { type: 'OrderDeliveryFailed', data: { failCode: 'SKU_UNAVAILABLE', failReason: 'no route', at: at(3) } }),
      order('G', { type: 'OrderFailed', data: { failCode: 'SKU_UNAVAILABLE', failReason: 'no route', at: at(4) } }),
    ],
    [
      placed('H', 1, at(0)),
      accepted('H', at(1)),
      sent('H', 1, at(2)),
      order('H', { type: 'OrderDeliveryFailed', data: { failCode: 'UPSTREAM_UNAVAILABLE', failReason: 'never reached', at: at(9) } }),
      order('H', { type: 'OrderFailed', data: { failCode: 'UPSTREAM_UNAVAILABLE', failReason: 'never reached', at: at(10) } }),
    ],
    [placed('I', 1, at(0)), accepted('I', at(1)), sent('I', 1, at(8))],
  ];
}

/** The bucket width_bucket gives an answer of `ms`: how many lower bounds are at or under it. */
const bucketOf = (ms: number) => UPSTREAM_LATENCY_BOUNDS_MS.filter((bound) => bound <= ms).length;

describe('order-minutes: a batch of events writes what the events one by one write', () => {
  const cases = projectionCases(orderMinutesProjection);
  const rows = async (t: TableNames<(typeof orderMinutesProjection.tables)[number]>) => ({
    minutes: (await cases.pool().query(`select * from ${t.rm_order_minutes} order by minute`)).rows,
    latency: (await cases.pool().query(`select * from ${t.rm_upstream_latency} order by minute, bucket`)).rows,
    sends: (await cases.pool().query(`select * from ${t.rm_upstream_sends} order by order_no`)).rows,
  });
  const rowsAfter = async (batches: LedgerEvent[][]) => rows(await cases.applied(batches));

  it('counts each outcome, send and answer in its minute, and each answer’s time from its send', async () => {
    const zero = { accepted: 0, refused: 0, unknown: 0, resolved: 0, succeeded: 0, failed: 0, sent: 0 };
    const noAnswers = { answered_delivered: 0, answered_refused: 0, answered_unknown: 0, answered_retried: 0 };
    expect(await rowsAfter([interleaved(lives())])).toEqual({
      minutes: [
        {
          minute: new Date('2026-11-25T10:00:00Z'),
          // A, B's second attempt, C, D, F, G, H and I accepted; B's first attempt and E refused.
          accepted: 8,
          refused: 2,
          unknown: 1,
          resolved: 1,
          succeeded: 1,
          // C (upstream), D (resolved), G (no route), H (given up).
          failed: 4,
          // B, C, D and H once, F three times, I once.
          sent: 8,
          answered_delivered: 1,
          // C; G was never sent, so its release answers nothing.
          answered_refused: 1,
          answered_unknown: 1,
          // F's second and third sends, and H given up.
          answered_retried: 3,
        },
        { minute: new Date('2026-11-25T10:01:00Z'), ...zero, succeeded: 1, ...noAnswers, answered_delivered: 1 },
      ],
      latency: [
        // B, C and D each answered a second after their send.
        { minute: new Date('2026-11-25T10:00:00Z'), bucket: bucketOf(1000), answers: 3 },
        // F's answer, 5.25 s after its last send.
        { minute: new Date('2026-11-25T10:01:00Z'), bucket: bucketOf(5250), answers: 1 },
      ],
      // I still waits for its answer.
      sends: [{ order_no: 'I', sent_at: new Date(at(8)) }],
    });
  });

  it('one batch, batches of three, and one event at a time leave the same rows', async () => {
    const log = interleaved(lives());
    const oneByOne = await rowsAfter(log.map((event) => [event]));
    const threes: LedgerEvent[][] = [];
    for (let i = 0; i < log.length; i += 3) threes.push(log.slice(i, i + 3));
    expect(await rowsAfter([log])).toEqual(oneByOne);
    expect(await rowsAfter(threes)).toEqual(oneByOne);
    // `apply`, event by event, is the same write.
    const t = await cases.freshTables();
    for (const event of log) await cases.pool().query(inlineStatements(orderMinutesProjection.apply(event, t)));
    expect(await rows(t)).toEqual(oneByOne);
  });

  it('sends a whole batch in three statements at most: the counts, the sends answered, the sends open', async () => {
    const t = await cases.freshTables();
    expect(orderMinutesProjection.applyAll!(interleaved(lives()), t)).toHaveLength(3);
    // Events that count nothing (a placement; wallet events are another stream) write nothing.
    expect(orderMinutesProjection.applyAll!(interleaved([[placed('Z', 1, at(0))]]), t)).toEqual([]);
  });
});
