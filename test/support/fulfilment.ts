import { signedFetch, TestMerchant } from './merchant-fixture';

/** Fulfilment on, with timeouts short enough for tests. */
export const FULFILMENT_ENV = {
  FULFILMENT_CONCURRENCY: '8',
  UPSTREAM_TIMEOUT_MS: '400',
  UPSTREAM_CONNECT_TIMEOUT_MS: '300',
  FULFILMENT_RETRY_BASE_MS: '50',
};

/**
 * The same, for tests whose every order must end: the built-in simulator
 * answers from the instance's own event loop, which a busy 2-core machine can
 * stall past 400 ms, and a timeout makes the result unknown (the order then
 * waits for a clerk). So do tests whose orders must end as the upstream
 * answers while the machine is busy (an upstream in the test's own process,
 * 300 ms deliveries); an order the upstream never answers (accounts ending
 * 999) then ends unknown after 5 s. Tests made of unknown results keep the
 * short timeout.
 */
export const FULFILMENT_ENV_EVERY_ORDER_ENDS = { ...FULFILMENT_ENV, UPSTREAM_TIMEOUT_MS: '5000' };

/** Polls the merchant API until the order leaves `processing` (or the time is up). */
export async function awaitFinal(service: { url: string }, merchant: TestMerchant, orderNo: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ order_no: orderNo }) });
    if (reply.body.data?.status !== 'processing' || Date.now() > deadline) return reply.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}
