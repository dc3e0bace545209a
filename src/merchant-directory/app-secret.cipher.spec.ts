import { randomBytes } from 'node:crypto';
import { AppSecretCipher, SecretsKeyMismatchError } from './app-secret.cipher';

describe('AppSecretCipher', () => {
  const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)];

  it('seals under the current key and opens it, marked current', () => {
    const cipher = new AppSecretCipher(k1);
    expect(cipher.open(cipher.encrypt('s3cret'))).toEqual({ secret: 's3cret', current: true });
  });

  it('opens a secret sealed under a previous key, marked not current; seals new ones under the current key', () => {
    const sealedUnderK1 = new AppSecretCipher(k1).encrypt('old');
    const rotated = new AppSecretCipher(k2, [k3, k1]);
    expect(rotated.open(sealedUnderK1)).toEqual({ secret: 'old', current: false });
    expect(new AppSecretCipher(k2).decrypt(rotated.encrypt('new'))).toBe('new');
  });

  it('a secret no key opens: open gives undefined, decrypt names SECRETS_KEY and SECRETS_KEY_PREVIOUS', () => {
    const sealed = new AppSecretCipher(k3).encrypt('elsewhere');
    const cipher = new AppSecretCipher(k1, [k2]);
    expect(cipher.open(sealed)).toBeUndefined();
    expect(() => cipher.decrypt(sealed, 'the app secret of merchant mch_1')).toThrow(SecretsKeyMismatchError);
    expect(() => cipher.decrypt(sealed, 'the app secret of merchant mch_1')).toThrow(
      /^the app secret of merchant mch_1 opens with neither SECRETS_KEY nor any key in SECRETS_KEY_PREVIOUS/,
    );
  });

  it('an altered secret opens with no key', () => {
    const sealed = new AppSecretCipher(k1).encrypt('s3cret');
    sealed[sealed.length - 1] ^= 1;
    expect(new AppSecretCipher(k1).open(sealed)).toBeUndefined();
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new AppSecretCipher(k1, [randomBytes(16)])).toThrow(/32 bytes/);
  });
});
