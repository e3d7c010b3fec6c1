import { request } from 'node:https';

/** An apiserver of the sandbox, reached with a bearer token over TLS verified by the sandbox CA. */
export interface KubeTarget {
  server: string;
  caPem: string;
  token: string;
}

export interface KubeResponse {
  status: number;
  body: string;
}

/**
 * One raw request to an apiserver. For what typed clients get wrong: @kubernetes/client-node
 * serializes a CRD through its models, which drop `x-kubernetes-*` schema keys (KubeRay's
 * CRDs are then refused), and an apply body can be sent as the YAML file it is.
 */
export function kubeRequest(
  target: KubeTarget,
  method: string,
  path: string,
  body?: { contentType: string; data: string | Buffer },
  timeoutMs = 30_000,
): Promise<KubeResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${target.token}`,
      accept: 'application/json',
    };
    if (body) headers['content-type'] = body.contentType;
    const req = request(
      `${target.server}${path}`,
      { method, ca: target.caPem, headers, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body?.data);
  });
}

/** GET, parsed; throws with the apiserver's answer on anything but 200. */
export async function kubeGetJson<T>(target: KubeTarget, path: string): Promise<T> {
  const response = await kubeRequest(target, 'GET', path);
  if (response.status !== 200) {
    throw new Error(`GET ${path}: HTTP ${response.status} ${response.body.slice(0, 300)}`);
  }
  return JSON.parse(response.body) as T;
}
