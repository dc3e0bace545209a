/**
 * The merchant directory's public API: provisioning's merchants and catalogue
 * as the other capabilities read them, the secrets' sealing, and the
 * provisioning tables, which the schema (src/schema.ts) creates.
 */
export { AppSecretCipher, SecretsKeyMismatchError } from './app-secret.cipher';
export { type CallbackRecipient, CallbackRecipients } from './callback-recipients';
export { type MerchantCredentials, MerchantDirectory } from './merchant-directory';
export { provisioningMigrations } from './provisioning.migrations';
export { SkuRoutes } from './sku-routes';
export { resealSecrets, type SecretsSurvey, someOf, surveySecrets } from './stored-secrets';
