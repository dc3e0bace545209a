import { Body, HttpCode, Inject, Logger, Post, Req } from '@nestjs/common';
import { IsIn } from 'class-validator';
import { Pool } from 'pg';
import { verifyReadModels, VerificationScope, WalletNotFoundError } from '../../auditing/read-model-verifier';
import { EVENT_STORE, EventStore } from '../../infrastructure/event-store/event-store.port';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { validateBody } from '../http/validate-body';
import { IsIdentifier, Optional } from '../http/validators';
import { requestFields } from '../../infrastructure/logging/request-context';

const SCOPES: readonly VerificationScope[] = ['merchant', 'wallet'];

export class VerifyDto {
  /** One wallet and its orders; without it, the whole log. */
  @Optional()
  @IsIdentifier()
  merchant_id?: string;

  /** With merchant_id: "wallet" checks the wallet alone, "merchant" (the default) its orders too. */
  @Optional()
  @IsIn(SCOPES, { message: `scope must be one of ${SCOPES.join(', ')}` })
  scope?: VerificationScope;
}

/** A long check says how far it is in the service's log, at most this often. */
const PROGRESS_EVERY_MS = 10_000;

/**
 * Replays the log and compares it with the read models (read-only, so
 * auditors may run it). It runs inside the request: the whole log takes as
 * long as a replay does, and reports its progress in the service's log.
 */
@BackOfficeController('audit')
@Roles('auditor')
export class VerificationController {
  private readonly logger = new Logger('Verification');

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post('verify')
  @HttpCode(200)
  async verify(@Body() body: unknown, @Req() request: object) {
    // An empty body means "everything", like {}.
    const { merchant_id: merchantId, scope } = await validateBody(VerifyDto, body === undefined ? {} : body);
    if (scope !== undefined && merchantId === undefined) throw new ApiError(422, 'VALIDATION_FAILED', 'scope needs a merchant_id', 'scope');
    const what = merchantId === undefined ? 'the whole log' : `${scope ?? 'merchant'} ${merchantId}`;
    let reported = Date.now();
    const onProgress = (events: number) => {
      if (Date.now() - reported < PROGRESS_EVERY_MS) return;
      reported = Date.now();
      this.logger.log({ message: `verifying ${what}: ${events} events checked so far`, ...requestFields(request) });
    };
    try {
      return successEnvelope('OK', await verifyReadModels(this.pool, this.store, { merchantId, scope, onProgress }));
    } catch (error) {
      if (error instanceof WalletNotFoundError) throw new ApiError(404, 'WALLET_NOT_FOUND', error.message);
      throw error;
    }
  }
}
