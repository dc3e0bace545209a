import { TEST_ENV } from '../support/service';

export const ADMIN = TEST_ENV.ADMIN_TOKEN;

export interface Reply {
  status: number;
  headers: Headers;

  body: any;
}

export interface RequestOptions {
  /** A bearer token, or null for no Authorization header. Default: the admin token. */
  token?: string | null;
  /** Sent exactly as given instead of a JSON body. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** One back-office request over real HTTP. */
export async function call(baseUrl: string, method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<Reply> {
  const token = options.token === undefined ? ADMIN : options.token;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text: the assertion on it will show what came back
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** Binds `call` to one service. */
export function adminClient(baseUrl: string) {
  const bound = (method: string, path: string, body?: unknown, options?: RequestOptions) => call(baseUrl, method, path, body, options);
  return Object.assign(bound, {
    async createMerchant(overrides: Record<string, unknown> = {}) {
      const reply = await bound('POST', '/admin/v1/merchants', { name: 'Acme Games', ...overrides });
      if (reply.status !== 201) throw new Error(`create merchant: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body.data as Record<string, any>;
    },
    async createStaff(role: string, name = `${role} person`) {
      const reply = await bound('POST', '/admin/v1/staff', { name, role });
      if (reply.status !== 201) throw new Error(`create staff: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body.data as { staff_id: string; name: string; role: string; token: string };
    },
  });
}

export const failure = (code: string, field?: string) =>
  field === undefined ? { success: false, code, message: expect.any(String) } : { success: false, code, message: expect.any(String), field };
