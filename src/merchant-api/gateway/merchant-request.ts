import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { MerchantCredentials } from '../../merchants';

/** What the gateway established about a request before any controller runs. */
export interface MerchantRequest {
  merchant: MerchantCredentials;
  rawBody: Buffer;
  /** The parsed JSON object (not parsed for verify-signature, which takes any body). */
  body: Record<string, unknown>;
  /** Signature check results, for verify-signature. */
  signing: { timestamp: string; nonce: string; path: string; signatureMatches: boolean; timestampWithinTolerance: boolean };
}

export const MERCHANT_REQUEST = Symbol('merchantRequest');

export function merchantRequestOf(request: Request): MerchantRequest {
  const context = (request as unknown as Record<symbol, MerchantRequest | undefined>)[MERCHANT_REQUEST];
  if (!context) throw new Error('merchant request context missing: is the gateway middleware mounted?');
  return context;
}

/** Controller parameter: the authenticated merchant request. */
export const Merchant = createParamDecorator((_: unknown, context: ExecutionContext) => merchantRequestOf(context.switchToHttp().getRequest<Request>()));
