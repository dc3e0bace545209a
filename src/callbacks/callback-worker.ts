import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { EventStore } from '../ledger/ports/event-store.port';
import { loadAggregate } from '../ledger/command-handling';
import { failureOf, FinalOrderState, isFinal, merchantStatus, orderDecider, OrderStage } from '../ledger/order/order.decider';
import { orderStream } from '../ledger/streams';
import { signatureOf, stringToSign } from '../shared/signature';
import { CallbackRecipient, CallbackRecipients } from '../merchant-directory';
import { formatAmount, Minor } from '../shared/money';
import { isoTimestamp } from '../shared/clock';
import { DispatchedWorker, JobDispatcher } from '../infrastructure/jobs/job-dispatcher';
import { StatementBatcher } from '../infrastructure/postgres/statement-batcher';
import { ClaimedDelivery, claimDeliveries, ReadModelOrder } from '../../projections/callback-claims.queries';
import { AttemptResult, AttemptStart, handBackDelivery, recordAttemptResults, startAttempts } from '../../projections/callback-schedule.queries';
import { CallbackAttemptResult, sendCallback } from './delivery/callback-sender';

export interface CallbackOptions {
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  concurrency: number;
  perMerchant: number;
  pollMs: number;
  instanceId: string;
  /** Told each attempt's outcome, for the metrics. */
  onAttempt?: (outcome: CallbackAttemptOutcome) => void;
}

export type CallbackAttemptOutcome = 'acknowledged' | 'not_acknowledged' | 'no_reply' | 'address_refused' | 'no_callback_url';

interface Delivery extends ClaimedDelivery {
  /** The merchant whose slot this delivery holds: taken by the claim when it knew the merchant, or by the sender; freed at the reply. */
  slotOf?: string;
}

/** The callback body (CONTRACT §2). */
export interface CallbackPayload {
  order_no: string;
  out_trade_no: string;
  status: 'success' | 'failed';
  amount: string;
  account_id: string;
  fail_code: string | null;
  fail_reason: string | null;
  completed_at: string;
}

/** What a final order's callback is made of, read from its events or from the read model. */
interface FinalOrder {
  orderNo: string;
  outTradeNo: string;
  stage: OrderStage;
  amount: Minor;
  accountId: string;
  failCode: string | null;
  failReason: string | null;
  completedAt: Date;
}

/** The body, or undefined when the order is not final (the merchant sees it `processing`). */
function callbackBody(order: FinalOrder): CallbackPayload | undefined {
  const status = merchantStatus(order.stage);
  if (status !== 'success' && status !== 'failed') return undefined;
  const failed = status === 'failed';
  return {
    order_no: order.orderNo,
    out_trade_no: order.outTradeNo,
    status,
    amount: formatAmount(order.amount),
    account_id: order.accountId,
    fail_code: failed ? order.failCode : null,
    fail_reason: failed ? order.failReason : null,
    completed_at: isoTimestamp(order.completedAt),
  };
}

/** A final order's callback, from its events. */
export function callbackPayload(state: FinalOrderState): CallbackPayload {
  const { order } = state;
  return callbackBody({
    orderNo: order.orderNo,
    outTradeNo: order.outTradeNo,
    stage: state.stage,
    amount: order.amount,
    accountId: order.accountId,
    failCode: failureOf(state)?.failCode ?? null,
    failReason: failureOf(state)?.failReason ?? null,
    completedAt: new Date(state.completedAt),
  })!;
}

/** The same callback from the orders read model's row, or undefined when the row does not show the order final. */
export function callbackPayloadFromReadModel(orderNo: string, row: ReadModelOrder): CallbackPayload | undefined {
  if (row.completed_ms === null) return undefined;
  return callbackBody({
    orderNo,
    outTradeNo: row.out_trade_no,
    stage: row.stage,
    amount: BigInt(row.amount),
    accountId: row.account_id,
    failCode: row.fail_code,
    failReason: row.fail_reason,
    completedAt: new Date(Number(row.completed_ms)),
  });
}

/**
 * Delivers final orders' callbacks on the contract's schedule until one is
 * acknowledged or the attempts run out. Each attempt is written (and the
 * count moved) before it is sent, so a crash neither loses nor repeats one,
 * and the attempt number's primary key refuses a second sender. A merchant
 * gets at most `perMerchant` callbacks in flight from an instance, so one slow
 * or dead endpoint cannot hold up the others.
 */
export class CallbackWorker extends DispatchedWorker<Delivery> {
  protected readonly dispatcher: JobDispatcher<Delivery>;
  /** Callbacks in flight per merchant, counted from the claim when it knows the merchant. */
  private readonly inFlight = new Map<string, number>();
  /** Callbacks sent together read their merchants (URL and secret, current at each attempt) in one statement. */
  private readonly merchants = new StatementBatcher<string, CallbackRecipient | undefined>((ids) => this.recipients.byIds(ids), {
    maxBatch: 200,
    maxInFlight: 2,
  });
  /** Attempts starting together are written down in one statement, and their results in another. */
  private readonly starts = new StatementBatcher<AttemptStart, boolean>((starts) => startAttempts(this.pool, this.options.instanceId, starts), {
    maxBatch: 200,
    maxInFlight: 2,
    isolateFailures: true,
  });
  private readonly results = new StatementBatcher<AttemptResult, void>((results) => recordAttemptResults(this.pool, this.options.instanceId, results), {
    maxBatch: 200,
    maxInFlight: 2,
    isolateFailures: true,
  });
  /** Merchant and URL pairs whose refusal is in the log already: once each, not once per attempt. */
  private readonly refusalsLogged = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly recipients: CallbackRecipients,
    private readonly options: CallbackOptions,
    private readonly send: typeof sendCallback = sendCallback,
    log: (message: string, error?: unknown) => void = () => undefined,
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    super();
    this.dispatcher = new JobDispatcher({
      name: 'callbacks',
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      claim: (limit) => this.claim(limit),
      run: (delivery) => this.deliver(delivery),
      describe: (delivery) => `the callback for ${delivery.order_no}`,
      log,
    });
  }

  private async claim(slots: number): Promise<Delivery[]> {
    const claimed: Delivery[] = await claimDeliveries(this.pool, {
      slots,
      perMerchant: this.options.perMerchant,
      inFlight: this.inFlight,
      leaseMs: this.options.timeoutMs + 10_000,
      instanceId: this.options.instanceId,
      timeoutMs: this.options.timeoutMs,
      retryDelaysMs: this.options.retryDelaysMs,
    });
    for (const delivery of claimed) {
      if (delivery.merchant_id === null) continue;
      // A started attempt is sent whatever: the claim counted its merchant's
      // slots, and only a delivery claimed before its merchant was known can
      // have taken one since.
      if (this.takeSlot(delivery.merchant_id, delivery.started)) delivery.slotOf = delivery.merchant_id;
    }
    return claimed;
  }

  /**
   * The callback and the order's merchant: from the read model's row read
   * with the claim, or from the order's events when the row does not show
   * the order final (a read model being rebuilt, say).
   */
  private async callbackOf(delivery: Delivery): Promise<{ payload: CallbackPayload; merchantId: string }> {
    const payload = delivery.order && callbackPayloadFromReadModel(delivery.order_no, delivery.order);
    if (payload) return { payload, merchantId: delivery.order!.merchant_id };
    const { state } = await loadAggregate(this.store, orderStream(delivery.order_no), orderDecider);
    // Deliveries are scheduled for final orders only: anything else is a broken log.
    if (!isFinal(state)) throw new Error(`order ${delivery.order_no} has a callback delivery but is ${state.stage}`);
    return { payload: callbackPayload(state), merchantId: state.order.merchantId };
  }

  private async deliver(delivery: Delivery): Promise<void> {
    if (delivery.started) return this.deliverStarted(delivery);
    try {
      const { payload, merchantId } = await this.callbackOf(delivery);
      if (delivery.slotOf !== merchantId) {
        this.releaseSlot(delivery);
        if (!this.takeSlot(merchantId)) {
          // Claimed before its merchant was known, or raced for the last slot:
          // hand it back, marked with its merchant, for a later claim.
          await handBackDelivery(this.pool, delivery.order_no, merchantId, this.options.instanceId);
          return;
        }
        delivery.slotOf = merchantId;
      }
      await this.attempt(delivery, payload, merchantId);
    } finally {
      this.releaseSlot(delivery);
    }
  }

  /** An attempt the claim started, with the order final in the read model: the send and its result. */
  private async deliverStarted(delivery: Delivery): Promise<void> {
    try {
      // The claim starts an attempt only when the read model's row carries the callback.
      const payload = callbackPayloadFromReadModel(delivery.order_no, delivery.order!)!;
      const recipient = delivery.recipient ? this.recipients.fromRow(delivery.recipient) : undefined;
      await this.sendAndRecord(delivery, delivery.attempts_made + 1, delivery.merchant_id!, recipient, payload);
    } finally {
      this.releaseSlot(delivery);
    }
  }

  /** A merchant's slot, unless it has none free; `always` takes it regardless. */
  private takeSlot(merchantId: string, always = false): boolean {
    const n = this.inFlight.get(merchantId) ?? 0;
    if (n >= this.options.perMerchant && !always) return false;
    this.inFlight.set(merchantId, n + 1);
    return true;
  }

  private freeSlot(merchantId: string): void {
    const left = (this.inFlight.get(merchantId) ?? 1) - 1;
    if (left <= 0) this.inFlight.delete(merchantId);
    else this.inFlight.set(merchantId, left);
  }

  /**
   * Frees the merchant's slot the delivery holds, if it still holds one.
   * Once the merchant's endpoint has answered (`replied`), the slot is free
   * while the result is recorded, and a claim soon may fill it. Held until
   * the result was recorded, a slot spent a statement's time and the wait
   * for the next claim on nothing of the merchant's, and a busy merchant's
   * callbacks fell behind its orders (bench:soak, whose hot merchant has a
   * quarter of the clients: 325 orders called back a second against 600
   * final).
   */
  private releaseSlot(delivery: Delivery, replied = false): void {
    if (delivery.slotOf === undefined) return;
    this.freeSlot(delivery.slotOf);
    delivery.slotOf = undefined;
    if (replied) this.dispatcher.nudge();
  }

  /** An attempt the claim did not start (merchant unknown, or the read model not final): its merchant read, and the attempt written down, here. */
  private async attempt(delivery: Delivery, payload: CallbackPayload, merchantId: string): Promise<void> {
    const delays = this.options.retryDelaysMs;
    const attempt = delivery.attempts_made + 1;
    const merchant = await this.merchants.run(merchantId);

    // Write the attempt down first. If this process dies while sending, the
    // attempt stays counted and the next one is already due.
    const fallbackDelay = this.options.timeoutMs + (delays[attempt - 1] ?? 0);
    const started = await this.starts.run({
      order_no: delivery.order_no,
      attempt,
      kind: delivery.manual_requested ? 'manual' : 'scheduled',
      url: merchant?.callbackUrl ?? null,
      merchant_id: merchantId,
      delay_ms: fallbackDelay,
    });
    if (!started) return; // our lease expired and another instance holds the delivery now
    await this.sendAndRecord(delivery, attempt, merchantId, merchant, payload);
  }

  /** Sends a counted attempt and records its result. */
  private async sendAndRecord(
    delivery: Delivery,
    attempt: number,
    merchantId: string,
    merchant: CallbackRecipient | undefined,
    payload: CallbackPayload,
  ): Promise<void> {
    const url = merchant?.callbackUrl ?? null;
    const result = url
      ? await this.sendSigned(url, merchant!, payload)
      : { acknowledged: false, statusCode: null, latencyMs: 0, replyExcerpt: '', error: 'the merchant has no callback_url' };
    this.releaseSlot(delivery, true);
    if (result.refusedAddress !== undefined) this.logRefusal(merchantId, url!, result.refusedAddress, delivery.order_no);
    this.options.onAttempt?.(
      result.acknowledged
        ? 'acknowledged'
        : !url
          ? 'no_callback_url'
          : result.refusedAddress !== undefined
            ? 'address_refused'
            : result.statusCode === null
              ? 'no_reply'
              : 'not_acknowledged',
    );
    const delays = this.options.retryDelaysMs;
    const maxAttempts = delivery.max_attempts ?? 1 + delays.length;
    const next = result.acknowledged ? 'acknowledged' : attempt >= maxAttempts ? 'exhausted' : 'pending';
    await this.results.run({
      order_no: delivery.order_no,
      attempt,
      next,
      delay_ms: delays[attempt - 1] ?? 0,
      status_code: result.statusCode,
      latency_ms: Math.round(result.latencyMs),
      reply_excerpt: result.replyExcerpt,
      acknowledged: result.acknowledged,
      error: result.error ?? null,
    });
    if (next === 'pending') this.nudgeIn(delays[attempt - 1] ?? 0);
  }

  /**
   * A refused address is a setting to fix, not a fault of the merchant's
   * endpoint, and without this line it would show only in the delivery log.
   */
  private logRefusal(merchantId: string, url: string, address: string, orderNo: string): void {
    const key = `${merchantId} ${url}`;
    if (this.refusalsLogged.has(key)) return;
    if (this.refusalsLogged.size >= 10_000) this.refusalsLogged.clear();
    this.refusalsLogged.add(key);
    this.warn(
      `callbacks of merchant ${merchantId} to ${url} are refused: ${address} is not a public address. ` +
        'CALLBACK_ALLOW_PRIVATE_NETWORKS=true allows it (development and tests only). ' +
        `Every refused attempt is in the delivery log (GET /admin/v1/orders/${orderNo}/callbacks); this line is not repeated for this merchant and URL.`,
    );
  }

  /** Signed like a merchant request, with the merchant's own secret, over the callback URL's path. */
  private sendSigned(url: string, merchant: CallbackRecipient, payload: object): Promise<CallbackAttemptResult> {
    const body = JSON.stringify(payload);
    const timestamp = String(Math.floor(Date.now() / 1000));
    // A random UUID: Node draws them from a buffer of entropy it refills now and then, not one CSPRNG call per callback.
    const nonce = randomUUID();
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve({ acknowledged: false, statusCode: null, latencyMs: 0, replyExcerpt: '', error: 'the callback_url is not a URL' });
    }
    const signature = signatureOf(merchant.appSecret(), stringToSign(timestamp, nonce, target.pathname, Buffer.from(body)));
    return this.send({
      url: target,
      body,
      timeoutMs: this.options.timeoutMs,
      allowPrivateNetworks: this.options.allowPrivateNetworks,
      headers: { 'X-Api-Key': merchant.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature },
    });
  }
}
