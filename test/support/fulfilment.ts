import { signedFetch, TestMerchant } from './merchant-fixture';

/**
 * Fulfilment on, with a short upstream timeout, for tests that make unknown
 * results by timing out (accounts ending 999, an upstream slower than the
 * timeout), so those come soon. A busy 2-core machine can stall the event loop
 * the upstream answers from for a few hundred ms, and a late answer is an
 * unknown result: a test whose other orders must be delivered, refused or
 * re-queried uses FULFILMENT_ENV_SOME_UNKNOWN.
 */
export const FULFILMENT_ENV = {
  FULFILMENT_CONCURRENCY: '8',
  UPSTREAM_TIMEOUT_MS: '400',
  UPSTREAM_CONNECT_TIMEOUT_MS: '300',
  FULFILMENT_RETRY_BASE_MS: '50',
};

/**
 * The same, for tests where no order is meant to time out: every order must
 * end as the upstream answers, and 5 s is more than a stall lasts. So do tests
 * whose orders must end while the machine is busy (an upstream in the test's
 * own process, 300 ms deliveries); an order the upstream never answers
 * (accounts ending 999) then ends unknown after 5 s, and a stop waits that
 * long for one in flight. Tests made of unknown results use FULFILMENT_ENV.
 */
export const FULFILMENT_ENV_EVERY_ORDER_ENDS = { ...FULFILMENT_ENV, UPSTREAM_TIMEOUT_MS: '5000' };

/**
 * For tests that mix the two: orders ending 999 end unknown after 1 s, and
 * the other orders' answers (a delivery, a refusal, a re-query's status, a
 * few ms from the simulator) keep most of that second to spare for a busy
 * machine's stalls; a stop waits no longer than that for an order in flight.
 */
export const FULFILMENT_ENV_SOME_UNKNOWN = { ...FULFILMENT_ENV, UPSTREAM_TIMEOUT_MS: '1000' };

/** Polls the merchant API until the order leaves `processing` (or the time is up). */
export async function awaitFinal(service: { url: string }, merchant: TestMerchant, orderNo: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ order_no: orderNo }) });
    if (reply.body.data?.status !== 'processing' || Date.now() > deadline) return reply.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}
