/**
 * The service's replies as the console reads them: the types the server
 * builds them with, imported for their types only (esbuild erases them, and
 * the dependency rules allow the console nothing else from the server).
 */
export type * from '../../back-office/replies.public';
export type { ConsoleSessionView } from '../console-session.view';
