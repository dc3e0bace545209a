import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's files: the page, the stylesheet and the icon from the assets folder
 * beside this module, and the script, bundled from app/ by esbuild. A fixed
 * map: a request can name only these files, never a path.
 *
 * Compiled (`npm run build`), the script was bundled into the assets folder
 * with the rest, and everything is read once at start-up: a missing bundle
 * stops the service there. From source (`npm start`, the tests), app/ sits
 * beside this module and the script is bundled in memory on its first
 * request, so it is always that of the source being run, with no step to
 * forget.
 */
const DIR = join(__dirname, 'assets');
const SCRIPT = 'console.js';
const FROM_SOURCE = existsSync(join(__dirname, 'app'));

export interface ConsoleAsset {
  type: string;
  body: Buffer;
}

const script = (body: Buffer): ConsoleAsset => ({ type: 'text/javascript; charset=utf-8', body });

const STATIC = new Map<string, ConsoleAsset>([
  ['console.css', { type: 'text/css; charset=utf-8', body: readFileSync(join(DIR, 'console.css')) }],
  ['favicon.ico', { type: 'image/x-icon', body: readFileSync(join(DIR, 'favicon.ico')) }],
]);

function prebuiltScript(): ConsoleAsset {
  const file = join(DIR, SCRIPT);
  if (!existsSync(file)) throw new Error(`The console's script ${file} is missing: npm run build bundles it`);
  return script(readFileSync(file));
}

let bundled: Promise<ConsoleAsset> | undefined = FROM_SOURCE ? undefined : Promise.resolve(prebuiltScript());

/** Bundled once per process; a failed bundle is tried again on the next request. */
function consoleScript(): Promise<ConsoleAsset> {
  if (!bundled) {
    bundled = import('./console-bundle').then(({ bundleConsole }) => bundleConsole()).then(script);
    bundled.catch(() => (bundled = undefined));
  }
  return bundled;
}

/** The named file, or undefined when it is not one of the console's. */
export async function consoleAsset(file: string): Promise<ConsoleAsset | undefined> {
  return file === SCRIPT ? consoleScript() : STATIC.get(file);
}

export const CONSOLE_PAGE = readFileSync(join(DIR, 'index.html'));
