import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { array, boolean, closed, integer, nullable, ref, Schema, string, timestamp } from '../schema-kit';
import { ok, operation, orderNo, PathItems, refusals } from './route-kit';

export const callbackLog: Schema = closed({
  order_no: string(),
  state: { enum: ['pending', 'acknowledged', 'exhausted'] },
  attempts_made: integer(),
  next_attempt_at: nullable(timestamp),
  attempts: array(
    closed({
      attempt: integer({ minimum: 1 }),
      kind: { enum: ['scheduled', 'manual'] },
      at: timestamp,
      url: nullable(string()),
      in_progress: boolean,
      status_code: nullable(integer()),
      latency_ms: nullable(integer()),
      reply_excerpt: nullable(string()),
      acknowledged: boolean,
      error: nullable(string()),
    }),
  ),
});

/** An order's callback deliveries, and sending one again. */
export function callbackPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.orderCallbacks)]: {
      get: operation({
        summary: "An order's callback delivery log",
        roles: ['reconciler'],
        parameters: [orderNo],
        responses: {
          200: ok('Every attempt', ref('CallbackLog')),
          ...refusals({ 404: { codes: ['CALLBACK_NOT_FOUND'], description: 'the order does not exist or is not final yet' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.redeliverCallback)]: {
      post: operation({
        summary: 'Send the callback again now',
        roles: ['reconciler'],
        parameters: [orderNo],
        responses: {
          202: ok('The delivery log, the new attempt due now', ref('CallbackLog')),
          ...refusals({ 404: { codes: ['CALLBACK_NOT_FOUND'], description: 'the order does not exist or is not final yet' } }),
        },
      }),
    },
  };
}
