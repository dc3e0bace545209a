import { Body, HttpCode, Inject, Post } from '@nestjs/common';
import { Pool } from 'pg';
import { verifyReadModels, WalletNotFoundError } from '../../auditing/read-model-verifier';
import { EVENT_STORE, EventStore } from '../../infrastructure/event-store/event-store.port';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { validateBody } from '../http/validate-body';
import { IsIdentifier, Optional } from '../http/validators';

export class VerifyDto {
  /** One wallet and its orders; without it, the whole log. */
  @Optional()
  @IsIdentifier()
  merchant_id?: string;
}

/**
 * Replays the log and compares it with the read models (read-only, so
 * auditors may run it). The whole-log check runs inside the request: it takes
 * as long as a replay does.
 */
@BackOfficeController('audit')
@Roles('auditor')
export class VerificationController {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post('verify')
  @HttpCode(200)
  async verify(@Body() body: unknown) {
    // An empty body means "everything", like {}.
    const { merchant_id: merchantId } = await validateBody(VerifyDto, body === undefined ? {} : body);
    try {
      return successEnvelope('OK', await verifyReadModels(this.pool, this.store, { merchantId }));
    } catch (error) {
      if (error instanceof WalletNotFoundError) throw new ApiError(404, 'WALLET_NOT_FOUND', error.message);
      throw error;
    }
  }
}
