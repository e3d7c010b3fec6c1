import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A failed log request, shaped like client-node's errors (code, body) so describeApiError reads it. */
export class PodLogError extends Error {
  readonly code: number;
  readonly body: unknown;
  constructor(code: number, body: unknown) {
    super(`pod log request failed with HTTP ${code}`);
    this.code = code;
    this.body = body;
  }
}

export interface OpenPodLog {
  response: IncomingMessage;
  /** Stops reading; the response then ends (or errors, which is swallowed). */
  close: () => void;
}

/**
 * GET .../pods/<pod>/log through the worker's apiserver, with the registered kubeconfig's TLS
 * and credentials. node:http(s) rather than client-node's Log, which pipes the response without
 * an error handler: a client that leaves mid-follow would throw an uncaught AbortError.
 */
export async function openPodLog(
  kubeConfig: KubeConfig,
  target: { namespace: string; pod: string; container: string },
  options: { follow: boolean; tailLines?: number },
): Promise<OpenPodLog> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the worker kubeconfig has no current cluster');
  const url = new URL(
    `${cluster.server.replace(/\/$/, '')}/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/log`,
  );
  url.searchParams.set('container', target.container);
  if (options.follow) url.searchParams.set('follow', 'true');
  if (options.tailLines !== undefined) url.searchParams.set('tailLines', String(options.tailLines));
  const requestOptions: https.RequestOptions = { method: 'GET', headers: {} };
  await kubeConfig.applyToHTTPSOptions(requestOptions);
  const transport = url.protocol === 'https:' ? https : http;
  const request = transport.request(url, requestOptions);
  request.on('error', () => {}); // reported through the promise below, or expected on close
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
    request.setTimeout(15_000, () => request.destroy(new Error(`no answer from ${url.host} within 15s`)));
    request.end();
  });
  request.setTimeout(0);
  response.on('error', () => {});
  if (response.statusCode !== 200) {
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    let body: unknown = Buffer.concat(chunks).toString('utf8');
    try {
      body = JSON.parse(body as string);
    } catch {
      // Not a Status object: keep the text.
    }
    throw new PodLogError(response.statusCode ?? 0, body);
  }
  return { response, close: () => request.destroy() };
}
