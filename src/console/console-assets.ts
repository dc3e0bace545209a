import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PageAsset, pageAssets, STYLESHEET_TYPE } from '../infrastructure/http/page-assets';

/**
 * The console's files: the page, the stylesheet and the icon from the assets
 * folder beside this module, and the script, bundled from app/ by esbuild
 * (in a build, into the assets folder; from source, where app/ sits beside
 * this module, in memory on its first request).
 */
const DIR = join(__dirname, 'assets');

/** The named file, or undefined when it is not one of the console's. */
export const consoleAsset: (file: string) => Promise<PageAsset | undefined> = pageAssets({
  page: 'The console',
  dir: DIR,
  fromSource: existsSync(join(__dirname, 'app')),
  script: 'console.js',
  files: new Map([
    ['console.css', { type: STYLESHEET_TYPE, body: readFileSync(join(DIR, 'console.css')) }],
    ['favicon.ico', { type: 'image/x-icon', body: readFileSync(join(DIR, 'favicon.ico')) }],
  ]),
  bundle: () => import('./console-bundle').then(({ bundleConsole }) => bundleConsole()),
});

export const CONSOLE_PAGE = readFileSync(join(DIR, 'index.html'));
