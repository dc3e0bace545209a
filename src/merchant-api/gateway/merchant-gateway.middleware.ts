import { Inject, Injectable, Logger, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { BlockList } from 'node:net';
import { AppConfig } from '../../config/config';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { MerchantCredentials, MerchantDirectory } from '../../merchant-directory';
import { ApiError, ON_UNEXPECTED_ERROR } from '../../infrastructure/http/api-error';
import { untilDatabaseAnswers } from '../../infrastructure/postgres/database-wait';
import { readRawBody } from '../../infrastructure/http/raw-body';
import { parseJsonObject } from '../../infrastructure/http/strict-json';
import { CLIENT_CLOSED_REQUEST } from '../../infrastructure/http/request-log';
import { requestContextOf, requestFields } from '../../infrastructure/logging/request-context';
import { METRICS, Metrics } from '../../infrastructure/metrics/metrics';
import { MAX_BODY_BYTES } from '../../shared/limits';
import { MERCHANT_REQUEST, MerchantRequest } from './merchant-request';
import { ReplayGuard } from './replay-guard';
import { IntakeGuard, RETRY_AFTER_S } from './intake-guard';
import { signatureMatches, stringToSign } from '../../shared/signature';
import { isAllowed, parseAllowList, sourceAddress } from './source-address';
import { V2_PATHS, V2_ROUTES } from '../routes.public';

export const TIMESTAMP_TOLERANCE_SECONDS = 300;
const AUTH_HEADERS = ['X-Api-Key', 'X-Timestamp', 'X-Nonce', 'X-Signature'] as const;
/** 1-128 printable ASCII characters: no line breaks, which would forge the string to sign. */
const NONCE = /^[\x20-\x7e]{1,128}$/;

const unauthorized = (code: string, message: string, field?: string) => new ApiError(401, code, message, field);

/**
 * Every /api request passes here first, and the checks run in the contract's
 * order: route, method, query string, size, authentication (key, timestamp,
 * signature, nonce), suspension and IP whitelist, rate limit, the backlog
 * policy (submits only), JSON body.
 * Controllers only see requests that passed them all.
 */
@Injectable()
export class MerchantGatewayMiddleware implements NestMiddleware {
  private readonly logger = new Logger('MerchantGateway');
  private readonly allowLists = new Map<string, BlockList | undefined>();

  constructor(
    private readonly directory: MerchantDirectory,
    private readonly replayGuard: ReplayGuard,
    private readonly intake: IntakeGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  async use(request: Request, _response: Response, next: NextFunction): Promise<void> {
    const [path, query] = splitUrl(request.originalUrl);
    if (!V2_PATHS.has(path)) throw new ApiError(404, 'NOT_FOUND', path.startsWith('/api/v1/') ? 'API v1 is retired' : 'No such route');
    const tracked = requestContextOf(request);
    if (tracked) {
      // Refusals here come before routing: name the route for the access line and the metrics.
      tracked.route = path;
      if (path === V2_ROUTES.submit) tracked.onReply = (status, code) => this.metrics.submits.inc({ outcome: submitOutcome(status, code) });
    }
    if (request.method !== 'POST') {
      throw new ApiError(405, 'METHOD_NOT_ALLOWED', 'Only POST is allowed', undefined, { Allow: 'POST' });
    }
    if (query !== undefined) throw new ApiError(400, 'QUERY_NOT_ALLOWED', 'Query strings are not signed: send parameters in the body');
    const rawBody = await readRawBody(request, MAX_BODY_BYTES);

    const headers = Object.fromEntries(AUTH_HEADERS.map((h) => [h, request.header(h)]));
    // verify-signature, the debugging tool, needs only a known key.
    const verifyOnly = path === V2_ROUTES.verifySignature;
    for (const header of verifyOnly ? AUTH_HEADERS.slice(0, 1) : AUTH_HEADERS) {
      if (!headers[header]) throw unauthorized('MISSING_AUTH_HEADER', `The ${header} header is required`, header);
    }
    const apiKey = headers['X-Api-Key']!;
    let merchant = await this.identify(apiKey);
    if (tracked) tracked.merchantId = merchant.merchantId;
    const now = Date.now();
    let signing = this.checkSignature(merchant, headers, path, rawBody, now);
    const checkOnCurrentRow = async () => {
      merchant = await this.identify(apiKey, { fresh: true });
      signing = this.checkSignature(merchant, headers, path, rawBody, now);
    };
    // Refuse a signature only on the merchant's current secret, never on a remembered one.
    if (!signing.signatureMatches) await checkOnCurrentRow();

    if (!verifyOnly) {
      if (!signing.timestampWithinTolerance) {
        throw unauthorized('TIMESTAMP_EXPIRED', `X-Timestamp must be Unix seconds within ${TIMESTAMP_TOLERANCE_SECONDS} s of the service clock`);
      }
      if (!NONCE.test(signing.nonce)) {
        throw unauthorized('INVALID_NONCE', 'X-Nonce must be 1-128 printable ASCII characters', 'X-Nonce');
      }
      if (!signing.signatureMatches) throw unauthorized('INVALID_SIGNATURE', 'The signature does not match the request');
    }
    // Only a correctly signed request gets this far, so a bad signature never burns a nonce.
    const nonce = verifyOnly ? undefined : { value: signing.nonce, timestampSeconds: Number(signing.timestamp) };
    const admission = await this.replayGuard.admit(merchant.merchantId, nonce, now);
    if (!admission.nonceFresh) throw unauthorized('NONCE_REUSED', 'This nonce was already used');
    // The merchant changed since it was remembered (through any instance): decide on the current row.
    if (admission.merchantVersion !== merchant.version) {
      await checkOnCurrentRow();
      if (!verifyOnly && !signing.signatureMatches) {
        await this.replayGuard.forget(merchant.merchantId, signing.nonce, Number(signing.timestamp), () => undefined);
        throw unauthorized('INVALID_SIGNATURE', 'The signature does not match the request');
      }
    }

    if (merchant.status !== 'active') throw new ApiError(403, 'MERCHANT_SUSPENDED', 'The merchant is suspended');
    if (merchant.ipWhitelist.length > 0) {
      const address = sourceAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], this.config.trustProxy);
      const allowList = this.allowListOf(merchant);
      if (!allowList || !isAllowed(allowList, address)) throw new ApiError(403, 'IP_NOT_ALLOWED', `Requests from ${address} are not allowed`);
    }
    if (admission.hitsThisSecond > merchant.rateLimitPerSecond) {
      const retryAfter = String(Math.max(1, Math.ceil((1000 - (now % 1000)) / 1000)));
      throw new ApiError(429, 'RATE_LIMITED', `More than ${merchant.rateLimitPerSecond} requests per second`, undefined, {
        'Retry-After': retryAfter,
      });
    }

    // The backlog policy: nothing is frozen, and the nonce is given back so that the same request can be sent again unchanged.
    if (path === V2_ROUTES.submit && this.intake.shedding(now)) {
      await this.replayGuard.forget(merchant.merchantId, signing.nonce, Number(signing.timestamp), (e) =>
        this.logger.warn({ message: `could not give back the nonce of a refused submit: ${String(e)}`, ...requestFields(request) }),
      );
      throw new ApiError(503, 'SERVICE_BUSY', "Orders are waiting for fulfilment beyond the service's limits: send the same request again later", undefined, {
        'Retry-After': String(RETRY_AFTER_S),
      });
    }

    const body = verifyOnly ? {} : parseJsonObject(rawBody);
    const context: MerchantRequest = { merchant, rawBody, body, catalogueRevision: admission.catalogueRevision, signing };
    const slots = request as unknown as Record<symbol, unknown>;
    slots[MERCHANT_REQUEST] = context;
    // A 500 promises that the same request may be retried unchanged: give its nonce back.
    if (!verifyOnly) {
      slots[ON_UNEXPECTED_ERROR] = () =>
        this.replayGuard.forget(merchant.merchantId, signing.nonce, Number(signing.timestamp), (e) =>
          this.logger.warn({ message: `could not give back the nonce of a failed request: ${String(e)}`, ...requestFields(request) }),
        );
    }
    next();
  }

  private async identify(apiKey: string, { fresh = false } = {}): Promise<MerchantCredentials> {
    const lookUp = () => (fresh ? this.directory.reload(apiKey) : this.directory.byApiKey(apiKey));
    // A read: waited through a failover, as the controllers wait for their own work (DatabaseWait).
    const merchant = apiKey.length <= 128 ? await untilDatabaseAnswers(lookUp, { waitMs: this.config.databaseWaitMs }) : undefined;
    if (!merchant) throw unauthorized('INVALID_API_KEY', 'Unknown API key');
    return merchant;
  }

  private checkSignature(
    merchant: MerchantCredentials,
    headers: Record<string, string | undefined>,
    path: string,
    rawBody: Buffer,
    now: number,
  ): MerchantRequest['signing'] {
    const timestamp = headers['X-Timestamp'] ?? '';
    const nonce = headers['X-Nonce'] ?? '';
    const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
    const timestampWithinTolerance = Math.abs(now / 1000 - seconds) <= TIMESTAMP_TOLERANCE_SECONDS;
    const given = headers['X-Signature'] ?? '';
    const message = stringToSign(timestamp, nonce, path, rawBody);
    const previous = merchant.previousAppSecret;
    // During a rotation's overlap the replaced secret verifies too, up to the instant the operator chose.
    const matches =
      given !== '' &&
      (signatureMatches(merchant.appSecret, message, given) ||
        (previous !== undefined && now < previous.validUntilMs && signatureMatches(previous.secret, message, given)));
    return { timestamp, nonce, path, signatureMatches: matches, timestampWithinTolerance };
  }

  private allowListOf(merchant: MerchantCredentials): BlockList | undefined {
    const key = `${merchant.merchantId}|${merchant.ipWhitelist.join(',')}`;
    if (!this.allowLists.has(key)) {
      if (this.allowLists.size > 10_000) this.allowLists.clear();
      this.allowLists.set(key, parseAllowList(merchant.ipWhitelist));
    }
    return this.allowLists.get(key);
  }
}

/** ACCEPTED or DUPLICATE, else the refusal's code. */
function submitOutcome(status: number, code: string | undefined): string {
  if (status === 202) return 'ACCEPTED';
  if (status === 200) return 'DUPLICATE';
  return code ?? (status === CLIENT_CLOSED_REQUEST ? 'CLIENT_CLOSED_REQUEST' : `HTTP_${status}`);
}

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}
