import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** No configured key opens a stored secret: it was sealed under another SECRETS_KEY. */
export class SecretsKeyMismatchError extends Error {
  constructor(what: string) {
    super(`${what} opens with neither SECRETS_KEY nor any key in SECRETS_KEY_PREVIOUS: it was sealed under another key`);
    this.name = 'SecretsKeyMismatchError';
  }
}

/**
 * Encrypts merchants' app secrets at rest with AES-256-GCM under SECRETS_KEY.
 * Opens with the previous keys too (SECRETS_KEY_PREVIOUS), so the key can be
 * rotated: the sealed form carries no key id, and a wrong key fails GCM's
 * authentication cheaply, so each key is simply tried in turn.
 */
export class AppSecretCipher {
  private readonly keys: readonly Buffer[];

  constructor(key: Buffer, previous: readonly Buffer[] = []) {
    this.keys = [key, ...previous];
    if (this.keys.some((k) => k.length !== 32)) throw new Error('SECRETS_KEY and SECRETS_KEY_PREVIOUS must be 32 bytes each');
  }

  encrypt(secret: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0], iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The secret, and whether it is sealed under the current key; undefined when no key opens it (or it was altered). */
  open(sealed: Buffer): { secret: string; current: boolean } | undefined {
    for (const [index, key] of this.keys.entries()) {
      const secret = openWith(key, sealed);
      if (secret !== undefined) return { secret, current: index === 0 };
    }
    return undefined;
  }

  /** Throws SecretsKeyMismatchError, naming the variables, when no key opens it. */
  decrypt(sealed: Buffer, what = 'a merchant app secret'): string {
    const opened = this.open(sealed);
    if (!opened) throw new SecretsKeyMismatchError(what);
    return opened.secret;
  }
}

function openWith(key: Buffer, sealed: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
