/** The back office's public API: staff sign-in and sessions, which the console (src/console) is built on. */
export { ConsoleSessions, SESSION_LIFETIME_SECONDS } from './auth/console-sessions';
export { arrivedOverTls, CSRF_HEADER, sessionCookie, sessionCookieHeader } from './auth/session-cookie';
export { StaffAuthenticator } from './auth/staff-authenticator';
