/**
 * The service under test: a child process on its own database, provisioned
 * through the back office (contract §3) with one product, one SKU and funded
 * merchants.
 */
import { randomBytes } from 'node:crypto';
import { SERVICE_NODE_FLAGS } from '../support/service-node-flags';
import { TestDatabase } from '../support/test-database';
import { log, onCleanUp } from './clean-up';
import { Credentials } from './load-generator';
import { Child, freePort, sleep, startNodeChild, waitForHttp200 } from './processes';

export const PRODUCT_ID = 'bench';
export const SKU_ID = 'bench-1';
export const PRICE = '1.00';
/** Per merchant: a hundred million orders at 1.00, more than any run can place. */
export const DEPOSIT = '100000000.00';
const RATE_LIMIT = 100_000; // the back office's maximum
const SERVICE_START_TIMEOUT_MS = 180_000;
const BACK_OFFICE_ATTEMPTS = 6;
const BACK_OFFICE_RETRY_DELAY_MS = 20_000;

class RouteMissing extends Error {}

export interface Service {
  child: Child;
  url: string;
}

export interface ServiceOptions {
  /** Variables on top of the benchmark's own environment and the database's. */
  env: NodeJS.ProcessEnv;
  merchants: number;
  /** Given to every merchant. */
  callbackUrl?: string;
}

async function startService(name: string, db: TestDatabase, adminToken: string, env: NodeJS.ProcessEnv): Promise<Service> {
  const port = await freePort();
  const child = startNodeChild(
    name,
    'src/main.ts',
    {
      ...process.env,
      ...db.env,
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      // The log format production writes (NODE_ENV is unset here, which would mean the terminal's).
      LOG_FORMAT: 'json',
      ...env,
    },
    SERVICE_NODE_FLAGS,
  );
  onCleanUp(`stop the ${name}`, () => child.stop());
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp200(`${url}/health`, child, SERVICE_START_TIMEOUT_MS);
  } catch (error) {
    await child.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${name} output:\n${child.logTail()}`, { cause: error });
  }
  return { child, url };
}

/** One back-office call; the data of its success envelope. A 404 for an unknown route is a RouteMissing. */
async function admin(service: Service, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.ok && json?.success === true) return json.data;
  if (response.status === 404 && json?.code === 'NOT_FOUND') throw new RouteMissing(`${method} ${path}: 404 ${text}`);
  throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
}

/** Product, SKU, and `count` merchants, each funded and priced. */
async function provision(service: Service, token: string, count: number, callbackUrl?: string): Promise<Credentials[]> {
  await admin(service, token, 'PUT', `/admin/v1/products/${PRODUCT_ID}`, { name: 'Benchmark product' });
  await admin(service, token, 'PUT', `/admin/v1/skus/${SKU_ID}`, {
    product_id: PRODUCT_ID,
    name: 'Benchmark SKU',
    required_account_fields: [],
    supports_account_check: false,
    on_shelf: true,
  });
  const merchants: Credentials[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const created = await admin(service, token, 'POST', '/admin/v1/merchants', {
        name: `Bench merchant ${i + 1}`,
        currency: 'USD',
        rate_limit_per_second: RATE_LIMIT,
        ...(callbackUrl === undefined ? {} : { callback_url: callbackUrl }),
      });
      const id = encodeURIComponent(created.merchant_id);
      await admin(service, token, 'POST', `/admin/v1/merchants/${id}/deposits`, { amount: DEPOSIT, reference: `bench-funding-${i + 1}` });
      await admin(service, token, 'PUT', `/admin/v1/merchants/${id}/prices/${SKU_ID}`, { price: PRICE });
      merchants[i] = { apiKey: created.api_key, appSecret: created.app_secret };
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, count) }, worker));
  return merchants;
}

/**
 * Starts the service and provisions it. The back office may still be in the
 * making: while its routes answer 404, stop, wait and start again (the tree
 * is run from source, so a restart picks up new routes).
 */
export async function startProvisionedService(name: string, db: TestDatabase, options: ServiceOptions) {
  const adminToken = randomBytes(24).toString('hex');
  for (let attempt = 1; ; attempt++) {
    log(`starting the ${name} (attempt ${attempt})`);
    const service = await startService(name, db, adminToken, options.env);
    try {
      const merchants = await provision(service, adminToken, options.merchants, options.callbackUrl);
      return { service, merchants, adminToken };
    } catch (error) {
      await service.child.stop();
      if (!(error instanceof RouteMissing) || attempt >= BACK_OFFICE_ATTEMPTS) throw error;
      log(`back office not there yet (${error.message.split('\n')[0]}); retrying in ${BACK_OFFICE_RETRY_DELAY_MS / 1000} s`);
      await sleep(BACK_OFFICE_RETRY_DELAY_MS);
    }
  }
}
