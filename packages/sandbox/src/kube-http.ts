import { request } from 'node:https';
import { waitFor } from './health-probes.ts';

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

/**
 * Server-side apply of one object (YAML or JSON) at its path, forced, as the sandbox's field
 * manager: the way `kubectl apply --server-side` sends it, so a CRD too large for the
 * last-applied annotation applies too. Throws with the apiserver's answer on a refusal.
 */
export async function serverSideApply(
  target: KubeTarget,
  path: string,
  data: string | Buffer,
): Promise<void> {
  const applied = await kubeRequest(target, 'PATCH', `${path}?fieldManager=jobrelay-sandbox&force=true`, {
    contentType: 'application/apply-patch+yaml',
    data,
  });
  if (applied.status !== 200 && applied.status !== 201) {
    throw new Error(
      `applying ${path} to ${target.server}: HTTP ${applied.status} ${applied.body.slice(0, 500)}`,
    );
  }
}

/**
 * Waits until discovery of `groupVersion` (`ray.io/v1`) lists every one of `resources`.
 * Discovery lists a CRD's resource only once it is Established (apiextensions' discovery
 * controller), and answers in a few hundred bytes where a CRD is a megabyte: poll that.
 */
export async function waitForServedResources(
  target: KubeTarget,
  groupVersion: string,
  resources: readonly string[],
  what: string,
): Promise<void> {
  await waitFor(
    `${what} to be established on ${target.server}`,
    async () => {
      const discovery = await kubeRequest(target, 'GET', `/apis/${groupVersion}`);
      if (discovery.status !== 200) return false;
      const served = new Set(
        (JSON.parse(discovery.body) as { resources: { name: string }[] }).resources.map((r) => r.name),
      );
      return resources.every((resource) => served.has(resource));
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
}
