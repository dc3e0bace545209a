import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's files, read once at start-up from the assets folder beside
 * this module (`npm run build` copies it next to the compiled one). A fixed
 * map: a request can name only these files, never a path.
 */
const DIR = join(__dirname, 'assets');

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export const CONSOLE_ASSETS = new Map(
  ['console.js', 'console.css'].map((file) => [file, { type: TYPES[file.slice(file.lastIndexOf('.'))], body: readFileSync(join(DIR, file)) }]),
);

export const CONSOLE_PAGE = readFileSync(join(DIR, 'index.html'));
