import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { DtoBodyPipe } from '../../infrastructure/http/dto-body-pipe';
import { BodyRules } from '../../infrastructure/http/dto-body-validator';
import { MerchantCredentials } from '../../merchant-directory';

/** What the gateway established about a request before any controller runs. */
export interface MerchantRequest {
  merchant: MerchantCredentials;
  rawBody: Buffer;
  /** The parsed JSON object (not parsed for verify-signature, which takes any body). */
  body: Record<string, unknown>;
  /** The catalogue's revision when the request was admitted: SKUs and prices as of then may be reused. */
  catalogueRevision: string;
  /** Signature check results, for verify-signature. */
  signing: { timestamp: string; nonce: string; path: string; signatureMatches: boolean; timestampWithinTolerance: boolean };
}

/**
 * How the merchant API reads a body (CONTRACT.md, docs/merchant-api.md): null
 * is a missing field, and fields are checked one by one in the order of the
 * endpoint's table.
 */
export const MERCHANT_BODY: BodyRules = { nullIs: 'absent', order: 'field by field' };

export const MERCHANT_REQUEST = Symbol('merchantRequest');

export function merchantRequestOf(request: Request): MerchantRequest {
  const context = (request as unknown as Record<symbol, MerchantRequest | undefined>)[MERCHANT_REQUEST];
  if (!context) throw new Error('merchant request context missing: is the gateway middleware mounted?');
  return context;
}

/** Controller parameter: the authenticated merchant request. */
export const Merchant = createParamDecorator((_: unknown, context: ExecutionContext) => merchantRequestOf(context.switchToHttp().getRequest<Request>()));

const parsedBody = createParamDecorator((_: unknown, context: ExecutionContext) => merchantRequestOf(context.switchToHttp().getRequest<Request>()).body);

/** Controller parameter: the request's JSON body, validated against the parameter's DTO class as the merchant API reads bodies. */
export const MerchantBody = () => parsedBody(new DtoBodyPipe(MERCHANT_BODY));

/** The body of the endpoints that take `{}` (products, balance). */
export class EmptyDto {}
