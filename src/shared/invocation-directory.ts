import { resolve } from 'node:path';

/**
 * The directory the user ran the command in. `npm run` starts scripts in the
 * package's root and keeps the user's directory in INIT_CWD, so a file name
 * typed on the command line is taken from there, as the user meant it.
 */
export function invocationDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.INIT_CWD || process.cwd();
}

/** A file argument as an absolute path, resolved from the directory the command was run in. */
export function fileArgument(name: string, directory: string = invocationDirectory()): string {
  return resolve(directory, name);
}
