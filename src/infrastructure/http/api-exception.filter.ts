import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { CommandRefusedError } from '../../shared/command-refused';
import { logFailure } from '../logging/log-failure';
import { requestContextOf, requestFields } from '../logging/request-context';
import { ApiError, failureEnvelope, ON_UNEXPECTED_ERROR } from './api-error';
import { sendJson } from './json-reply';
import { ClientGoneError } from './raw-body';

/** HTTP status of each business refusal code that can reach a client: the one map, for every command (submit included). */
const REFUSAL_STATUS: Record<string, number> = {
  INSUFFICIENT_BALANCE: 402,
  OUT_TRADE_NO_CONFLICT: 409,
  ORDER_NOT_FOUND: 404,
  DEPOSIT_REFERENCE_CONFLICT: 409,
  ADJUSTMENT_REFERENCE_CONFLICT: 409,
  ORDER_ALREADY_ADJUSTED: 409,
  WALLET_NOT_OPEN: 409,
  WALLET_ALREADY_OPEN: 409,
  INVALID_AMOUNT: 422,
  RESOLUTION_REQUIRED: 409,
  ORDER_NOT_IN_RECONCILIATION: 409,
  OUTCOME_ALREADY_DECIDED: 409,
  ORDER_ALREADY_FINAL: 409,
  ORDER_NOT_ACCEPTED: 409,
  // The four-eyes rule (the back office's approvals).
  APPROVAL_NOT_FOUND: 404,
  SELF_APPROVAL: 403,
  APPROVAL_ROLE_NOT_ALLOWED: 403,
  APPROVAL_ALREADY_DECIDED: 409,
  APPROVAL_NOT_GRANTED: 409,
  APPROVAL_EXISTS: 409,
};

const HTTP_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
};

/**
 * The one place errors become responses: every failure leaves in the
 * contract's envelope, and nothing unexpected leaks a stack trace. An error
 * is never a conditional GET's answer, so no ETag either (sendJson).
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  async catch(error: unknown, host: ArgumentsHost): Promise<void> {
    const response = host.switchToHttp().getResponse<Response>();
    // Nobody to answer, and not a fault: the HTTP server already counted it.
    if (response.headersSent || error instanceof ClientGoneError) return;
    const request = requestContextOf(host.switchToHttp().getRequest());
    if (error instanceof ApiError) {
      if (request) request.code = error.code;
      response.set(error.headers);
      sendJson(response, error.status, { ...failureEnvelope(error.code, error.message, error.field), ...error.details });
      return;
    }
    if (error instanceof CommandRefusedError) {
      if (request) request.code = error.code;
      sendJson(response, REFUSAL_STATUS[error.code] ?? 409, failureEnvelope(error.code, error.message));
      return;
    }
    if (error instanceof HttpException && error.getStatus() < 500) {
      const status = error.getStatus();
      const message = status === 404 ? 'No such route' : error.message;
      const code = HTTP_CODES[status] ?? 'BAD_REQUEST';
      if (request) request.code = code;
      sendJson(response, status, failureEnvelope(code, message));
      return;
    }
    if (request) request.code = 'INTERNAL_ERROR';
    const httpRequest = host.switchToHttp().getRequest<object>();
    logFailure(this.logger, 'unexpected error', error, requestFields(httpRequest));
    const undo = (httpRequest as Record<symbol, (() => Promise<void>) | undefined>)[ON_UNEXPECTED_ERROR];
    await undo?.().catch((e: unknown) =>
      this.logger.warn({ message: `could not undo after an unexpected error: ${String(e)}`, ...requestFields(httpRequest) }),
    );
    sendJson(response, 500, failureEnvelope('INTERNAL_ERROR', 'An unexpected error occurred; the same request may be retried unchanged'));
  }
}
