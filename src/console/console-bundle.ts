import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bundleBrowserScript } from '../infrastructure/http/browser-bundle';

/** The console's source: the script that starts it, beside this module in src/console. */
export const CONSOLE_ENTRY = join(__dirname, 'app', 'main.ts');

/**
 * The console's script as the browser gets it: one ES module with everything
 * it imports, minified, for the browsers staff use (any of the last few years).
 * Type-only imports of the service's reply types are erased: the bundle
 * holds the console's own code and nothing else.
 */
export function bundleConsole(entry = CONSOLE_ENTRY): Promise<Buffer> {
  return bundleBrowserScript(entry);
}

/** `npm run build`: the bundle written where the compiled service serves it from. */
async function writeBundle(file: string) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, await bundleConsole());
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: console-bundle.ts OUTPUT_FILE');
  writeBundle(file).catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
