import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'topup_console';
export const CSRF_HEADER = 'x-csrf-token';

/** The console session cookie's value, if the request carries one. */
export function sessionCookie(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE && /^[A-Za-z0-9_-]{43}$/.test(value.join('='))) return value.join('=');
  }
  return undefined;
}

export function sessionCookieHeader(value: string, { secure, maxAgeSeconds }: { secure: boolean; maxAgeSeconds: number }): string {
  return [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`, ...(secure ? ['Secure'] : [])].join('; ');
}
