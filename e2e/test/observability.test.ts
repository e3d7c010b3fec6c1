// The controller's Prometheus metrics, read from a real controller's /metrics after it has
// dispatched Jobs: the figures the issue asks for are there and move, and every metric the
// shipped alerts (deploy/helm/jobrelay/files/alerts.rules.yaml) and Grafana dashboard
// (files/grafana-dashboard.json) query is one the controller exports, so neither watches a
// name that does not exist.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '@jobrelay/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const files = join(repositoryRoot, 'deploy/helm/jobrelay/files');
let fleet: Fleet;
let controller: ControllerProcess;
let namespace: string;
let exposition: string;

/** Metric family names (TYPE lines) the controller exports. */
function families(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

/** jobrelay metric names an expression refers to, with a histogram's series suffixes removed. */
function referencedMetrics(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/\bjobrelay_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')),
  );
}

function sample(name: string, labels: Record<string, string>): number | undefined {
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(' ').pop());
  }
  return undefined;
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  controller = startController(fleet.sandbox, ['--log-level=info']);
  namespace = await createTestNamespace(fleet.management, 'metrics');
  const names = Array.from({ length: 4 }, (_, i) => uniqueName(`metrics-${i}`));
  for (const name of names)
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name,
        managedBy: dispatcherManagedBy,
        requests: { cpu: '50m' },
        pod: { runSeconds: 1 },
      }),
    });
  await eventually(
    'the Jobs to complete through the workers',
    async () => {
      const jobs = (await fleet.management.batch.listNamespacedJob({ namespace })).items;
      return jobs.length === names.length && jobs.every((job) => isTrue(job, 'Complete')) ? true : undefined;
    },
    { timeoutMs: 180_000 },
  );
  exposition = await (await fetch(`${await controller.healthUrl()}/metrics`)).text();
}, 240_000);

afterAll(async () => {
  await controller?.kill('SIGTERM');
  await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
});

describe('the controller’s /metrics', () => {
  it('counts dispatch latency and status lag in histograms', () => {
    expect(sample('jobrelay_dispatch_latency_seconds_count', {})).toBeGreaterThanOrEqual(4);
    // Each Job's mirror changed at least once (started, then completed) and was written back.
    expect(sample('jobrelay_status_lag_seconds_count', {})).toBeGreaterThanOrEqual(4);
    const slowest = sample('jobrelay_dispatch_latency_seconds_bucket', { le: '+Inf' });
    expect(slowest).toBe(sample('jobrelay_dispatch_latency_seconds_count', {}));
  });

  it('times every reconcile, by the lane its key ran from', () => {
    // Every reconcile is timed once, whichever lane it ran from; each of the 4 Jobs had some.
    const lanes = ['urgent', 'changes', 'resync'];
    const total = (series: string) =>
      lanes.map((lane) => sample(series, { lane }) ?? 0).reduce((a, b) => a + b, 0);
    const counted =
      (sample('jobrelay_reconciles_total', { result: 'ok' }) ?? 0) +
      (sample('jobrelay_reconciles_total', { result: 'error' }) ?? 0);
    expect(total('jobrelay_reconcile_duration_seconds_count')).toBeGreaterThanOrEqual(4);
    expect(total('jobrelay_reconcile_duration_seconds_count')).toBe(counted);
    expect(total('jobrelay_reconcile_duration_seconds_sum')).toBeGreaterThan(0);
  });

  it('counts placements by cluster, and worker API calls by cluster, verb and code', () => {
    const placed = [
      ...exposition.matchAll(/^jobrelay_placements_total\{outcome="placed",cluster="(worker-\d)"\} (\d+)/gm),
    ];
    expect(placed.reduce((sum, m) => sum + Number(m[2]), 0)).toBeGreaterThanOrEqual(4);
    expect(exposition).toMatch(
      /^jobrelay_worker_api_requests_total\{cluster="worker-\d",verb="create",code="201"\} [1-9]/m,
    );
    // The first mirror into a namespace the worker lacks is answered 404 (then the namespace
    // is created and the mirror again): answers other than 2xx are counted with their code.
    expect(exposition).toMatch(
      /^jobrelay_worker_api_requests_total\{cluster="worker-\d",verb="create",code="404"\} [1-9]/m,
    );
  });

  it('reports the leader, the queue, Active clusters, and no rejected status write', () => {
    expect(sample('jobrelay_leader', {})).toBe(1);
    expect(sample('jobrelay_placement_queue_oldest_waiting_seconds', {})).toBe(0);
    for (const worker of fleet.sandbox.workers)
      expect(sample('jobrelay_worker_cluster_active', { cluster: worker.name })).toBe(1);
    expect(sample('jobrelay_origin_status_writes_total', { result: 'written' })).toBeGreaterThanOrEqual(4);
    expect(sample('jobrelay_origin_status_writes_total', { result: 'rejected' }) ?? 0).toBe(0);
    expect(sample('jobrelay_reconciles_total', { result: 'ok' })).toBeGreaterThan(0);
  });

  it.each(['alerts.rules.yaml', 'grafana-dashboard.json'])(
    'exports every jobrelay metric %s queries',
    (file) => {
      const referenced = referencedMetrics(readFileSync(join(files, file), 'utf8'));
      expect(referenced.size).toBeGreaterThan(3);
      const exported = families(exposition);
      expect([...referenced].filter((name) => !exported.has(name))).toEqual([]);
    },
  );
});
