import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A file a page fetches, with its content type. */
export interface PageAsset {
  type: string;
  body: Buffer;
}

export const SCRIPT_TYPE = 'text/javascript; charset=utf-8';
export const STYLESHEET_TYPE = 'text/css; charset=utf-8';

export interface PageAssetsOptions {
  /** The page, for the error when a build lacks its script ("The console"). */
  page: string;
  /** The assets folder: the page's own files, and in a build its bundled script. */
  dir: string;
  /** Run from source (npm start, the tests): the script is bundled in memory instead of read from `dir`. */
  fromSource: boolean;
  /** The script's file name. */
  script: string;
  /** Every other file a request may name. */
  files: ReadonlyMap<string, PageAsset>;
  bundle: () => Promise<Buffer>;
}

/**
 * A page's files as a fixed map: a request can name only these, never a
 * path. Compiled (`npm run build`), the script was bundled into the assets
 * folder with the rest and is read at start-up: a missing bundle stops the
 * service there. From source, the script is bundled on its first request,
 * once per process, so it is always that of the source being run, with no
 * step to forget; a failed bundle is tried again on the next request.
 */
export function pageAssets({ page, dir, fromSource, script, files, bundle }: PageAssetsOptions): (file: string) => Promise<PageAsset | undefined> {
  const asScript = (body: Buffer): PageAsset => ({ type: SCRIPT_TYPE, body });
  let bundled: Promise<PageAsset> | undefined;
  if (!fromSource) {
    const prebuilt = join(dir, script);
    if (!existsSync(prebuilt)) throw new Error(`${page}'s script ${prebuilt} is missing: npm run build bundles it`);
    bundled = Promise.resolve(asScript(readFileSync(prebuilt)));
  }
  const scriptAsset = (): Promise<PageAsset> => {
    if (!bundled) {
      bundled = bundle().then(asScript);
      bundled.catch(() => (bundled = undefined));
    }
    return bundled;
  };
  return async (file) => (file === script ? scriptAsset() : files.get(file));
}
