import type { FailureEnvelope, SuccessEnvelope } from './replies';
import { currentSession, setSession } from './session';

/** A reply the service gave: its data on success, its failure envelope otherwise. */
export type Reply<T> = { ok: true; status: number; body: SuccessEnvelope<T>; data: T } | Failure;

export interface Failure {
  ok: false;
  status: number;
  body: FailureEnvelope;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A body sent as it is, not as JSON: a file the clerk chose (an upstream's report), with its media type. */
export interface RawBody {
  raw: Blob;
  type: string;
}

/**
 * Calls the service with the session cookie (the browser sends it), the
 * X-Console header only this script sends, and the session's CSRF token with
 * every change. A body is sent as JSON, or, given as a RawBody, as it is
 * with its own Content-Type. A 401 from the back office means the session
 * ended: back to the sign-in page.
 */
export async function api<T>(method: Method, path: string, body?: unknown): Promise<Reply<T>> {
  const headers: Record<string, string> = { 'x-console': '1' };
  const session = currentSession();
  if (method !== 'GET' && session) headers['x-csrf-token'] = session.csrf_token;
  let payload: BodyInit | undefined;
  if (isRaw(body)) {
    headers['content-type'] = body.type;
    payload = body.raw;
  } else if (body !== undefined) payload = JSON.stringify(body);
  const response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  let json: SuccessEnvelope<T> | FailureEnvelope;
  try {
    json = (await response.json()) as SuccessEnvelope<T> | FailureEnvelope;
  } catch {
    json = { success: false, code: 'UNREADABLE_REPLY', message: `The service answered ${response.status} without JSON` };
  }
  if (response.status === 401 && path.startsWith('/admin/')) {
    setSession(null);
    location.hash = '#/sign-in';
  }
  if (response.ok && json.success) return { ok: true, status: response.status, body: json, data: json.data };
  return { ok: false, status: response.status, body: json.success ? unexpected(response.status) : json };
}

const isRaw = (body: unknown): body is RawBody => typeof body === 'object' && body !== null && 'raw' in body && body.raw instanceof Blob;

const unexpected = (status: number): FailureEnvelope => ({
  success: false,
  code: 'UNEXPECTED_REPLY',
  message: `The service answered ${status} with a success`,
});

/** A path segment, encoded: ids come from the page's address and from the service. */
export const segment = encodeURIComponent;
