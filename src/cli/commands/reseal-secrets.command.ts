import { ConfigError } from '../../config/config';
import { AppSecretCipher, resealSecrets, someOf } from '../../merchant-directory';
import { noMorePositionals } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const resealSecretsCommand: CliCommand = {
  name: 'reseal-secrets',
  synopsis: 'reseal-secrets',
  description:
    'Seals every stored merchant app secret under SECRETS_KEY, opening the old ones with SECRETS_KEY_PREVIOUS (docs/secrets-key-rotation.md).\n' +
    'Safe while the service runs with both keys, and safe to repeat; afterwards SECRETS_KEY_PREVIOUS can be dropped.\n' +
    'Prints {"merchants", "resealed", "unopenable"} as JSON; exits 3 if some secret opens with no key (those are left as they are).',
  options: [],
  async run(args, io, context) {
    noMorePositionals(args, 0);
    const { config, secretsKeySet, pool } = await context();
    // Without it the CLI holds a stand-in key: sealing under that would lose every secret.
    if (!secretsKeySet) throw new ConfigError(['SECRETS_KEY is required by reseal-secrets: the key to seal under (64 hex characters)']);
    const result = await resealSecrets(pool, new AppSecretCipher(config.secretsKey, config.secretsKeysPrevious));
    io.stdout(`${JSON.stringify({ secrets: result.total, resealed: result.resealed, unopenable: result.unopenable }, null, 2)}\n`);
    io.stderr(`reseal-secrets: resealed ${result.resealed} of ${result.total} stored app secrets under SECRETS_KEY\n`);
    if (result.unopenable.length === 0) return EXIT.OK;
    io.stderr(
      `reseal-secrets: ${result.unopenable.length} secrets open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS (${someOf(result.unopenable)}): ` +
        'add the key they were sealed with to SECRETS_KEY_PREVIOUS and run again\n',
    );
    return EXIT.FAILURE;
  },
};
