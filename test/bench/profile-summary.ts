import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './processes';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/**
 * Where a V8 .cpuprofile spent its time, by self time: the areas (a package
 * under node_modules, node's own internals, the project's folders, GC, idle)
 * and the top functions. `node test/bench/profile-summary.ts FILE` prints the
 * same for a saved profile.
 */
export function summariseProfile(path: string, title = "CPU profile of the service's main thread during the measured run", top = 15): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const totalHits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0) || 1;
  const wallMs = (profile.endTime - profile.startTime) / 1000;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(functionName, url);
    byArea.set(area, (byArea.get(area) ?? 0) + hits);
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
  }
  const busy = totalHits - (byArea.get('(idle)') ?? 0);
  const pct = (hits: number, of: number) => `${((100 * hits) / of).toFixed(1).padStart(5)} %`;
  const lines = [
    `${title}: ${path}`,
    `  ${(wallMs / 1000).toFixed(1)} s of wall time, busy ${pct(busy, totalHits).trim()} of it on the thread; shares below are of the busy time.`,
    '  self time by area:',
    ...[...byArea]
      .filter(([area]) => area !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, hits]) => `    ${pct(hits, busy)}  ${area}`),
    '  self time by function:',
    ...[...byFunction]
      .filter(([name]) => !name.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => `    ${pct(hits, busy)}  ${name}`),
  ];
  return lines.join('\n');
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nodeModules = path.lastIndexOf('/node_modules/');
  if (nodeModules >= 0) return path.slice(nodeModules + '/node_modules/'.length);
  return path.startsWith('/') ? relative(ROOT, path) : path;
}

function areaOf(functionName: string, url: string): string {
  if (!url) {
    // (garbage collector), (program), (idle), or a native function such as a crypto binding
    return functionName.startsWith('(') ? functionName : '(native)';
  }
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace(/^file:\/\//, '');
  const nodeModules = path.lastIndexOf('/node_modules/');
  if (nodeModules >= 0) {
    const rest = path.slice(nodeModules + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (path.startsWith('/')) {
    const parts = relative(ROOT, path).split('/');
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.join('/');
  }
  return path;
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node -r ts-node/register/transpile-only test/bench/profile-summary.ts FILE.cpuprofile');
    process.exit(2);
  }
  console.log(summariseProfile(file));
}
