import { Global, Module } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/config';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { AppSecretCipher } from './app-secret.cipher';
import { MerchantDirectory } from './merchant-directory';

/** Merchant credentials, shared by the back office (writes) and the merchant API (reads). */
@Global()
@Module({
  providers: [
    { provide: AppSecretCipher, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new AppSecretCipher(config.secretsKey, config.secretsKeysPrevious) },
    {
      provide: MerchantDirectory,
      inject: [PG_POOL, AppSecretCipher],
      useFactory: (pool: Pool, cipher: AppSecretCipher) => new MerchantDirectory(pool, cipher),
    },
  ],
  exports: [AppSecretCipher, MerchantDirectory],
})
export class MerchantsModule {}
