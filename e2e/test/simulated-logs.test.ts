// Pod logs on a worker, through the worker's apiserver: the apiserver connects (TLS, verified
// with the sandbox CA) to the node's kubelet endpoint, which is KWOK's server, and KWOK serves
// the simulated log file for every container (packages/sandbox/kwok/simulated-container-log.txt).
import { execFile } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serviceAccountKubeconfig, simulatedLogLines } from '@jobrelay/sandbox';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();
const workerName = sandbox.workers[0]!.name;
let worker: ClusterClients;
let namespace: string;
let pod: V1Pod;

/** The text a kubelet returns for the CRI-format log file: the message after "<time> <stream> F ". */
const expectedLines = simulatedLogLines();

beforeAll(async () => {
  worker = clientsFor(sandbox, workerName);
  namespace = await createTestNamespace(worker, 'logs');
  const name = uniqueName('logs');
  // Long enough that the pod is still Running while the test reads and follows its log.
  await worker.batch.createNamespacedJob({ namespace, body: sandboxJob({ name, pod: { runSeconds: 60 } }) });
  pod = await eventually(`a Running pod of Job ${name}`, async () => {
    const pods = await worker.core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
    return pods.items.find((p) => p.status?.phase === 'Running');
  });
});

function podLog(options: { tailLines?: number } = {}): Promise<string> {
  return worker.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace, ...options });
}

describe('simulated container logs on a worker', () => {
  it('are the simulated lines, saying the container is simulated', async () => {
    expect(expectedLines.length).toBeGreaterThanOrEqual(3);
    expect(expectedLines[0]).toContain('simulated by KWOK');
    expect(await podLog()).toBe(`${expectedLines.join('\n')}\n`);
  });

  it('honour tailLines', async () => {
    expect(await podLog({ tailLines: 2 })).toBe(`${expectedLines.slice(-2).join('\n')}\n`);
    expect(await podLog({ tailLines: 1 })).toBe(`${expectedLines.at(-1)}\n`);
  });

  it('stream with follow=true and stay open until the client closes', async () => {
    // node:https rather than client-node's Log: Log pipes the response without an error
    // handler, so closing the stream from the client throws an uncaught AbortError.
    const server = sandbox.workers[0]!.server;
    const url = `${server}/api/v1/namespaces/${namespace}/pods/${pod.metadata!.name!}/log?follow=true`;
    let text = '';
    let ended = false;
    const request = https.get(url, {
      ca: sandbox.caPem,
      headers: { authorization: `Bearer ${sandbox.token('admin')}` },
    });
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
    });
    expect(response.statusCode).toBe(200);
    response.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    response.on('end', () => {
      ended = true;
    });
    // The client closing is the expected end; swallow the resulting socket error.
    request.on('error', () => {});
    response.on('error', () => {});
    try {
      await eventually('the whole log on the followed stream', async () =>
        text === `${expectedLines.join('\n')}\n` ? true : undefined,
      );
      await new Promise((r) => setTimeout(r, 2_500));
      expect(ended).toBe(false);
      expect(response.complete).toBe(false);
    } finally {
      request.destroy();
    }
  });

  it('reach `kubectl logs` and the registered dispatcher identity of the worker', async () => {
    const kubectl = join(sandbox.binariesDir, 'kubectl');
    const { stdout } = await promisify(execFile)(kubectl, [
      `--kubeconfig=${sandbox.kubeconfigPath(workerName)}`,
      `--namespace=${namespace}`,
      'logs',
      pod.metadata!.name!,
      '--tail=1',
    ]);
    expect(stdout).toBe(`${expectedLines.at(-1)}\n`);

    // The admin API streams logs with the kubeconfig registered for the worker (deploy/worker's
    // jobrelay-dispatcher, which has pods/log get), not with admin.
    const dispatcher = new KubeConfig();
    dispatcher.loadFromString(await serviceAccountKubeconfig(sandbox, workerName));
    const log = await dispatcher
      .makeApiClient(CoreV1Api)
      .readNamespacedPodLog({ name: pod.metadata!.name!, namespace, tailLines: 1 });
    expect(log).toBe(`${expectedLines.at(-1)}\n`);
  });
});
