import { readFileSync } from 'node:fs';
import https from 'node:https';

/** One series of apiserver_request_total: who was asked what, and how often. */
export interface RequestSeries {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  count: number;
}

/** The apiserver's own count of requests it served, by verb and resource, from its /metrics. */
export type RequestCounts = Map<string, RequestSeries>;

const seriesLine = /^apiserver_request_total\{([^}]*)\}\s+([0-9.e+]+)$/;
const labelPair = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function parseRequestCounts(metricsText: string): RequestCounts {
  const counts: RequestCounts = new Map();
  for (const line of metricsText.split('\n')) {
    const match = seriesLine.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of match[1]!.matchAll(labelPair)) labels[name!] = value!;
    const series = {
      verb: labels.verb ?? '',
      group: labels.group ?? '',
      resource: labels.resource ?? '',
      subresource: labels.subresource ?? '',
    };
    const key = `${series.verb} ${series.group}/${series.resource}${series.subresource ? `/${series.subresource}` : ''}`;
    const count = Number(match[2]);
    const existing = counts.get(key);
    // Series differ by code, scope, component...: summed per verb and resource.
    if (existing) existing.count += count;
    else counts.set(key, { ...series, count });
  }
  return counts;
}

/** What was served between two readings (series new in `after` count from zero). */
export function requestsBetween(before: RequestCounts, after: RequestCounts): RequestCounts {
  const delta: RequestCounts = new Map();
  for (const [key, series] of after) {
    const count = series.count - (before.get(key)?.count ?? 0);
    if (count > 0) delta.set(key, { ...series, count });
  }
  return delta;
}

export const writeVerbs = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY', 'CREATE', 'UPDATE']);

/** Sums the series that pass `include`. */
export function sumRequests(counts: RequestCounts, include: (series: RequestSeries) => boolean): number {
  let total = 0;
  for (const series of counts.values()) if (include(series)) total += series.count;
  return total;
}

export interface ApiserverTarget {
  name: string;
  server: string;
  caPem: string;
  token: string;
}

/** Reads one apiserver's /metrics with an admin token over verified TLS. */
export function readRequestCounts(target: ApiserverTarget): Promise<RequestCounts> {
  const url = new URL('/metrics', target.server);
  return new Promise((resolve, reject) => {
    const request = https.get(
      url,
      { ca: target.caPem, headers: { authorization: `Bearer ${target.token}` }, timeout: 30_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => {
          if (response.statusCode !== 200)
            reject(new Error(`GET ${url} answered ${response.statusCode}: ${body.slice(0, 200)}`));
          else resolve(parseRequestCounts(body));
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on('error', reject);
  });
}

/** The token of a kubeconfig written by the sandbox (a plain `token:` user). */
export function kubeconfigToken(path: string): string {
  const match = /^\s*token:\s*(\S+)\s*$/m.exec(readFileSync(path, 'utf8'));
  if (!match) throw new Error(`${path} has no token user`);
  return match[1]!;
}
