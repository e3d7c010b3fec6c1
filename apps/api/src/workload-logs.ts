// Pod logs of a dispatched workload of any kind, streamed from its worker through the API. Its
// pods are found by the label selectors its kind's adapter gives for its mirror (podsOf): a
// Job's by its controller-uid, a RayCluster's by ray.io/cluster, a RayJob's RayCluster and
// submitter Job; nothing here knows a kind.
import type { WorkerConnection } from '@jobrelay/clusters';
import type { AnyWorkloadKindAdapter, KubeObject, WorkloadPods } from '@jobrelay/kinds';
import { describeApiError, dns1123Label, dns1123Subdomain, statusCodeOf } from '@jobrelay/kube';
import type { V1Pod } from '@kubernetes/client-node';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { OpenStream } from './api-app.ts';
import type { FleetView } from './fleet-view.ts';
import { LogOutput } from './log-output.ts';
import { openPodLog } from './pod-log-stream.ts';
import { ApiProblem } from './problems.ts';
import { closedLogLine } from './stream-policy.ts';
import { iso } from './workload-detail.ts';

export const logsQuerySchema = z.object({
  follow: z.enum(['true', 'false']).optional(),
  container: z.string().max(63).regex(dns1123Label, 'must be a container name').optional(),
  pod: z.string().max(253).regex(dns1123Subdomain, 'must be a pod name').optional(),
  tailLines: z.coerce.number().int().min(0).max(100_000).optional(),
});

export type LogsQuery = z.infer<typeof logsQuerySchema>;

export const logsDescription =
  'text/plain. With several pods or containers each line is prefixed with `[pod/container] `. `follow=true` streams until the pods end or the client leaves. A log read is a stream: it counts against --max-streams-per-identity (429 `too-many-streams` past it), is re-authorized at the access-review cache interval with the permissions it was opened with, and ends after --max-stream-seconds; when it is ended for any of these, its last line is `[jobrelay] stream closed (<code>): <why>` (codes `forbidden`, `unauthenticated`, `stream-expired`, `unavailable`). A slow reader pauses the read from the worker: nothing piles up in the API.';

/** The pods of every group, each once, oldest first. */
async function listPods(
  connection: WorkerConnection,
  namespace: string,
  groups: readonly WorkloadPods[],
): Promise<V1Pod[]> {
  const lists = await Promise.all(
    groups.map((group) =>
      connection.core.listNamespacedPod({ namespace, labelSelector: group.labelSelector }),
    ),
  );
  const byName = new Map<string, V1Pod>();
  for (const pod of lists.flatMap((list) => list.items)) byName.set(pod.metadata?.name ?? '', pod);
  return [...byName.values()].sort(
    (a, b) =>
      (iso(a.metadata?.creationTimestamp) ?? '').localeCompare(iso(b.metadata?.creationTimestamp) ?? '') ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

/**
 * Streams the logs of `origin`'s pods on its worker as the reply (text/plain). A workload not
 * placed yet is 409, an unreachable worker 503, no mirror or no pods 404; the first stream is
 * opened before answering, so a refused one (a container not started) is a clear error status.
 */
export async function streamWorkloadLogs(
  fleet: FleetView,
  adapter: AnyWorkloadKindAdapter,
  origin: KubeObject,
  query: LogsQuery,
  request: FastifyRequest,
  reply: FastifyReply,
  openStream: OpenStream,
): Promise<FastifyReply> {
  const namespace = origin.metadata?.namespace ?? '';
  const name = origin.metadata?.name ?? '';
  const { follow, container, pod: onlyPod, tailLines } = query;
  const found = fleet.mirrorOf(adapter, origin);
  if (found.kind !== 'found') {
    if (found.kind === 'unplaced')
      throw new ApiProblem(
        'conflict',
        `${namespace}/${name} is not placed on a cluster yet: no pods, no logs`,
      );
    if (found.kind === 'disconnected')
      throw new ApiProblem('unavailable', `${found.message}; retry later`, {}, { 'retry-after': '5' });
    throw new ApiProblem('not-found', `${namespace}/${name}: ${found.message}`);
  }
  const { cluster, connection, mirror } = found;
  if (!adapter.podsOf) {
    throw new ApiProblem(
      'not-found',
      `the ${adapter.name} kind does not say how to find its pods, so the API cannot show their logs`,
    );
  }
  const groups = adapter.podsOf(mirror);
  const pods = groups.length === 0 ? [] : await listPods(connection, namespace, groups);
  const streams = pods
    .filter((pod) => !onlyPod || pod.metadata?.name === onlyPod)
    .flatMap((pod) =>
      (pod.spec?.containers ?? [])
        .filter((c) => !container || c.name === container)
        .map((c) => ({ pod: pod.metadata!.name!, container: c.name })),
    );
  if (streams.length === 0) {
    const where = groups.length > 0 ? ` (${groups.map((g) => g.description).join(', ')})` : '';
    throw new ApiProblem(
      'not-found',
      onlyPod || container
        ? `no pod${onlyPod ? ` ${onlyPod}` : ''}${container ? ` with container ${container}` : ''} of ${namespace}/${name} on ${cluster}${where}`
        : `${namespace}/${name} has no pods on ${cluster}${where} (yet, or any more)`,
    );
  }
  const prefix = streams.length > 1;
  const output = new LogOutput();
  const closers = new Set<() => void>();
  let left = false;
  let upstreamDone = false;
  const closeAll = () => {
    for (const close of closers) close();
  };
  // Admitted (or refused with 429) before any stream to a worker opens.
  const supervised = openStream(request, {
    kind: 'logs',
    end: (problem) => {
      output.end(closedLogLine(problem));
      closeAll();
    },
    bufferedBytes: () => output.bufferedBytes + reply.raw.writableLength,
  });
  // The stream counts against the caller's cap until its last byte left (or the client did).
  reply.raw.once('close', () => {
    left = true;
    closeAll();
    output.end();
    supervised.release(upstreamDone ? 'finished' : 'client-left');
  });
  const open = (target: { pod: string; container: string }) => {
    const opened = openPodLog(
      connection.kubeConfig,
      { namespace, ...target },
      { follow: follow === 'true', ...(tailLines !== undefined ? { tailLines } : {}) },
    );
    const done = opened.then(
      ({ response, close }) =>
        new Promise<void>((resolve) => {
          closers.add(close);
          if (left || output.ended) close();
          let partial = '';
          response.on('data', (chunk: Buffer) => {
            if (!prefix) {
              output.write(chunk, response);
              return;
            }
            const lines = (partial + chunk.toString('utf8')).split('\n');
            partial = lines.pop() ?? '';
            if (lines.length > 0)
              output.write(
                lines.map((line) => `[${target.pod}/${target.container}] ${line}\n`).join(''),
                response,
              );
          });
          const finish = () => {
            closers.delete(close);
            output.forget(response);
            if (prefix && partial) output.write(`[${target.pod}/${target.container}] ${partial}\n`);
            partial = '';
            resolve();
          };
          response.once('end', finish);
          response.once('close', finish);
        }),
      () => undefined,
    );
    return { target, opened, done };
  };
  // A followed stream ends when its pods have terminated, as a kubelet's does (KWOK's never
  // ends by itself): the pods are looked at every 2 s while anything is followed.
  const follower =
    follow === 'true'
      ? setInterval(() => {
          void listPods(connection, namespace, groups)
            .then((list) => {
              const terminated = (p: V1Pod) =>
                p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
              if (list.length > 0 && list.every(terminated)) for (const close of closers) close();
            })
            .catch(() => {});
        }, 2_000)
      : undefined;
  const note = (target: { pod: string; container: string }, err: unknown) =>
    output.write(
      `[${target.pod}/${target.container}] (no logs: ${logProblem(err, target, cluster).message})\n`,
    );
  const [first, ...rest] = streams;
  const firstStream = open(first!);
  try {
    await firstStream.opened;
  } catch (err) {
    clearInterval(follower);
    supervised.release('finished');
    throw logProblem(err, first!, cluster);
  }
  void (async () => {
    try {
      if (follow === 'true') {
        const others = rest.map(open);
        await Promise.all([
          firstStream.done,
          ...others.map((s) => s.opened.catch((err: unknown) => note(s.target, err)).then(() => s.done)),
        ]);
      } else {
        await firstStream.done;
        for (const target of rest) {
          if (left || output.ended) break;
          const s = open(target);
          await s.opened.catch((err: unknown) => note(target, err));
          await s.done;
        }
      }
    } finally {
      clearInterval(follower);
      upstreamDone = true;
      output.end();
    }
  })();
  return reply
    .type('text/plain; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(output.stream as never);
}

function logProblem(err: unknown, target: { pod: string; container: string }, cluster: string): ApiProblem {
  const status = statusCodeOf(err);
  if (status === 400 || status === 404) {
    return new ApiProblem(
      'conflict',
      `${cluster} has no logs for ${target.pod}/${target.container} yet (the container may not have started): ${describeApiError(err)}`,
    );
  }
  return new ApiProblem('upstream-error', `reading logs from ${cluster} failed: ${describeApiError(err)}`);
}
