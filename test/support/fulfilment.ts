import { signedFetch, TestMerchant } from './merchant-fixture';

/** Fulfilment on, with timeouts short enough for tests. */
export const FULFILMENT_ENV = {
  FULFILMENT_CONCURRENCY: '8',
  UPSTREAM_TIMEOUT_MS: '400',
  UPSTREAM_CONNECT_TIMEOUT_MS: '300',
  FULFILMENT_RETRY_BASE_MS: '50',
};

/** Polls the merchant API until the order leaves `processing` (or the time is up). */
export async function awaitFinal(service: { url: string }, merchant: TestMerchant, orderNo: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ order_no: orderNo }) });
    if (reply.body.data?.status !== 'processing' || Date.now() > deadline) return reply.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}
