import { Module } from '@nestjs/common';

/** The merchant API v2: /api/v2/*, signed requests. */
@Module({})
export class MerchantApiModule {}
