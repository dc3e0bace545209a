import { Global, Module } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/config';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { AppSecretCipher } from './app-secret.cipher';
import { CallbackRecipients } from './callback-recipients';
import { MerchantDirectory } from './merchant-directory';
import { SkuRoutes } from './sku-routes';

/**
 * Provisioning's merchants and catalogue, written by the back office and read
 * here for the others: credentials for the merchant API, callback recipients
 * for callbacks, SKU routes for fulfilment.
 */
@Global()
@Module({
  providers: [
    { provide: AppSecretCipher, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new AppSecretCipher(config.secretsKey, config.secretsKeysPrevious) },
    {
      provide: MerchantDirectory,
      inject: [PG_POOL, AppSecretCipher],
      useFactory: (pool: Pool, cipher: AppSecretCipher) => new MerchantDirectory(pool, cipher),
    },
    {
      provide: CallbackRecipients,
      inject: [PG_POOL, AppSecretCipher],
      useFactory: (pool: Pool, cipher: AppSecretCipher) => new CallbackRecipients(pool, cipher),
    },
    { provide: SkuRoutes, inject: [PG_POOL], useFactory: (pool: Pool) => new SkuRoutes(pool) },
  ],
  exports: [AppSecretCipher, MerchantDirectory, CallbackRecipients, SkuRoutes],
})
export class MerchantDirectoryModule {}
