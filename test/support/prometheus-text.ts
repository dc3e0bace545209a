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

/** The top-up requests an instance's fulfilment worker sent to the upstream, whatever their outcome. */
export const upstreamRequests = (samples: Map<string, number>): number =>
  ['delivered', 'refused', 'unknown', 'retryable'].reduce((sum, outcome) => sum + sample(samples, 'topup_upstream_requests_total', { outcome }), 0);
