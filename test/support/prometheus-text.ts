/** Samples of a Prometheus text exposition, keyed `name{label="value",...}` exactly as written. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+?(?:\{.*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    samples.set(match[1], Number(match[2]));
  }
  return samples;
}

/** A sample's value; labels in any order. Absent counters read as 0. */
export function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const [key, value] of samples) {
    const match = /^([^{]+)(?:\{(.*)\})?$/.exec(key)!;
    if (match[1] !== name) continue;
    const have = match[2] ? match[2].split(/,(?=[a-z_]+=")/) : [];
    if (have.length === wanted.length && wanted.every((pair) => have.includes(pair))) return value;
  }
  return 0;
}

/** A service's /metrics (no token), parsed. */
export async function scrapeMetrics(baseUrl: string): Promise<Map<string, number>> {
  const reply = await fetch(`${baseUrl}/metrics`);
  if (!reply.ok) throw new Error(`GET /metrics answered ${reply.status}`);
  return parseSamples(await reply.text());
}

/** The sum over every series of `name` whose labels include each of `having` (`label="value"`): a counter whatever its labels. */
export function total(samples: Map<string, number>, name: string, ...having: string[]): number {
  let sum = 0;
  for (const [series, value] of samples) {
    const labels = series.startsWith(`${name}{`) ? series.slice(name.length) : series === name ? '' : undefined;
    if (labels !== undefined && having.every((label) => labels.includes(label))) sum += value;
  }
  return sum;
}
