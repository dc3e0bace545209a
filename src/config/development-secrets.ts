import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Where a development run keeps what must survive a restart: generated secrets, the embedded database. */
export function dataDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.DATA_DIR || '.data');
}

const FILE = 'development-secrets.json';
type Stored = Partial<Record<'ADMIN_TOKEN' | 'SECRETS_KEY' | 'EMBEDDED_POSTGRES_PASSWORD', string>>;

export interface DevelopmentSecrets {
  /** The environment with ADMIN_TOKEN and SECRETS_KEY filled in where they were unset. */
  readonly env: NodeJS.ProcessEnv;
  /** Writes what was generated (call it once the configuration is valid); returns what to log. */
  save(): Promise<string[]>;
}

/**
 * Outside production, an unset ADMIN_TOKEN or SECRETS_KEY is generated once
 * and kept in DATA_DIR, so a restart keeps the administrator's token and,
 * above all, the key that seals merchants' app secrets (a new key on every
 * start made every merchant call fail). Production never reads or writes the
 * file: it must be given both.
 */
export function developmentSecrets(env: NodeJS.ProcessEnv = process.env): DevelopmentSecrets {
  if (env.NODE_ENV === 'production') return { env, save: async () => [] };
  const file = join(dataDirectory(env), FILE);
  const stored = readStored(file);
  const generated: Stored = {};
  const filled: NodeJS.ProcessEnv = { ...env };
  for (const [name, make] of [
    ['ADMIN_TOKEN', () => randomBytes(24).toString('base64url')],
    ['SECRETS_KEY', () => randomBytes(32).toString('hex')],
  ] as const) {
    if (env[name]) continue;
    filled[name] = stored[name] ?? (generated[name] = make());
  }
  const used = (['ADMIN_TOKEN', 'SECRETS_KEY'] as const).filter((name) => !env[name]);
  return {
    env: filled,
    async save() {
      if (Object.keys(generated).length > 0) await storeSecrets(env, generated);
      if (used.length === 0) return [];
      const how = Object.keys(generated).length > 0 ? 'generated and kept' : 'kept';
      return [
        `${used.join(' and ')} not set: ${how} in ${file} for the next start (development only; production must set them). ` +
          `Read the token with: node -p "require('${file}').ADMIN_TOKEN"`,
      ];
    },
  };
}

/** The embedded database's password: made on its first start, kept beside the secrets. */
export async function embeddedPostgresPassword(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const stored = readStored(join(dataDirectory(env), FILE)).EMBEDDED_POSTGRES_PASSWORD;
  if (stored) return stored;
  const password = randomBytes(18).toString('base64url');
  await storeSecrets(env, { EMBEDDED_POSTGRES_PASSWORD: password });
  return password;
}

function readStored(file: string): Stored {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read ${file}: ${(error as Error).message} (delete it to start with new secrets)`, { cause: error });
  }
}

async function storeSecrets(env: NodeJS.ProcessEnv, values: Stored): Promise<void> {
  const dir = dataDirectory(env);
  const file = join(dir, FILE);
  await mkdir(dir, { recursive: true });
  await writeFile(file, `${JSON.stringify({ ...readStored(file), ...values }, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
