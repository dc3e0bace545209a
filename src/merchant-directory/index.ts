/** The merchant directory's public API: provisioning's merchants and catalogue as the other capabilities read them, and the secrets' sealing. */
export { AppSecretCipher, SecretsKeyMismatchError } from './app-secret.cipher';
export { type CallbackRecipient, CallbackRecipients } from './callback-recipients';
export { type MerchantCredentials, MerchantDirectory } from './merchant-directory';
export { SkuRoutes } from './sku-routes';
export { resealSecrets, type SecretsSurvey, someOf, surveySecrets } from './stored-secrets';
