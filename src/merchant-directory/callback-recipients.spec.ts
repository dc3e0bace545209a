import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';
import { CallbackRecipients } from './callback-recipients';

describe('CallbackRecipients: the secret a callback is signed with', () => {
  const cipher = new AppSecretCipher(randomBytes(32));
  // fromRow reads nothing: the rows come from the callback claim's own statement.
  const unusedPool = {} as Pool;
  const row = (sealed: Buffer) => ({ api_key: 'key_1', app_secret_enc: sealed, callback_url: 'https://merchant.example/cb' });

  it('opens each sealed secret once, and a rotated secret (sealed anew) is the one served after the rotation', () => {
    const recipients = new CallbackRecipients(unusedPool, cipher);
    const decrypt = jest.spyOn(cipher, 'decrypt');
    const before = cipher.encrypt('first-secret');
    expect([recipients.fromRow(row(before)).appSecret(), recipients.fromRow(row(before)).appSecret()]).toEqual(['first-secret', 'first-secret']);
    expect(decrypt).toHaveBeenCalledTimes(1);

    const after = cipher.encrypt('rotated-secret');
    expect(recipients.fromRow(row(after)).appSecret()).toBe('rotated-secret');
    // The same secret sealed again has a new IV: a distinct entry, opened once more.
    expect(recipients.fromRow(row(cipher.encrypt('first-secret'))).appSecret()).toBe('first-secret');
    expect(decrypt).toHaveBeenCalledTimes(3);
    decrypt.mockRestore();
  });

  it('keeps at most its bound of opened secrets: past it, it starts afresh and opens again what it dropped', () => {
    const recipients = new CallbackRecipients(unusedPool, cipher, 2);
    const decrypt = jest.spyOn(cipher, 'decrypt');
    const [a, b, c] = ['a', 'b', 'c'].map((s) => cipher.encrypt(s));
    expect([a, b, c].map((s) => recipients.fromRow(row(s)).appSecret())).toEqual(['a', 'b', 'c']);
    expect(decrypt).toHaveBeenCalledTimes(3);
    // Full at c: the entries of a and b were dropped, c kept.
    expect([recipients.fromRow(row(c)).appSecret(), recipients.fromRow(row(a)).appSecret()]).toEqual(['c', 'a']);
    expect(decrypt).toHaveBeenCalledTimes(4);
    decrypt.mockRestore();
  });

  it('a secret no configured key opens fails the signing, naming the keys', () => {
    const elsewhere = new AppSecretCipher(randomBytes(32)).encrypt('sealed-elsewhere');
    expect(() => new CallbackRecipients(unusedPool, cipher).fromRow(row(elsewhere)).appSecret()).toThrow(/SECRETS_KEY/);
  });
});
