import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchJobAdapter, jobSetKind, rayClusterAdapter, rayJobAdapter } from '@jobrelay/kinds';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, loadApiConfig } from '../src/api-config.ts';
import { ApiProblem } from '../src/problems.ts';
import { onKind, onKinds } from '../src/routes/permissions.ts';
import { chosenKinds, WorkloadKinds } from '../src/workload-kinds.ts';

const kinds = new WorkloadKinds([
  { adapter: batchJobAdapter, managedBy: 'jobrelay.dev/dispatcher' },
  { adapter: rayClusterAdapter, managedBy: 'kueue.x-k8s.io/multikueue' },
  { adapter: rayJobAdapter, managedBy: 'kueue.x-k8s.io/multikueue' },
]);

function problemOf(run: () => unknown): ApiProblem {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiProblem) return err;
    throw err;
  }
  throw new Error('no problem was thrown');
}

describe('the kinds the API shows: the controller’s flags, read by the same code', () => {
  it('defaults to every built-in kind, with the Job’s --managed-by and the Ray kinds’ only value', () => {
    const choices = chosenKinds(loadApiConfig([], {}));
    expect(choices.map((c) => [c.adapter.name, c.managedBy])).toEqual([
      ['job', 'jobrelay.dev/dispatcher'],
      ['raycluster', 'kueue.x-k8s.io/multikueue'],
      ['rayjob', 'kueue.x-k8s.io/multikueue'],
    ]);
  });

  it('takes --kinds, --managed-by, --kind-managed-by and --generic-kinds-file as the controller does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-kinds-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'kinds.yaml');
    writeFileSync(file, JSON.stringify(jobSetKind));
    const config = loadApiConfig(
      ['--kinds', 'job,jobset', '--managed-by', 'example.com/relay', '--generic-kinds-file', file],
      {},
    );
    expect(config.kinds).toEqual(['job', 'jobset']);
    expect(chosenKinds(config).map((c) => [c.adapter.name, c.managedBy])).toEqual([
      ['job', 'example.com/relay'],
      ['jobset', 'jobrelay.dev/dispatcher'],
    ]);
    const overridden = loadApiConfig(
      ['--kinds', 'jobset', '--kind-managed-by', 'jobset=example.com/sets', '--generic-kinds-file', file],
      {},
    );
    expect(chosenKinds(overridden)[0]?.managedBy).toBe('example.com/sets');
  });

  it('refuses what the controller refuses, naming the flag', () => {
    expect(() => chosenKinds(loadApiConfig(['--kinds', 'job,rayservice'], {}))).toThrow(
      /--kinds: unknown kind "rayservice"/,
    );
    expect(() =>
      chosenKinds(loadApiConfig(['--kind-managed-by', 'raycluster=jobrelay.dev/dispatcher'], {})),
    ).toThrow(/only accept spec.managedBy kueue.x-k8s.io\/multikueue/);
    expect(() => loadApiConfig(['--kind-managed-by', 'raycluster'], {})).toThrow(/--kind-managed-by/);
    expect(() => chosenKinds(loadApiConfig(['--generic-kinds-file', '/no/such/file'], {}))).toThrow(
      ConfigError,
    );
  });
});

describe('WorkloadKinds: how a request names a kind', () => {
  it('finds a kind by its name in URLs and filters, and by a manifest’s apiVersion and kind', () => {
    expect(kinds.named('raycluster')).toBe(rayClusterAdapter);
    expect(kinds.named('RayCluster')).toBeUndefined();
    expect(kinds.ofManifest('ray.io/v1', 'RayJob')).toBe(rayJobAdapter);
    expect(kinds.ofManifest('batch/v1', 'Job')).toBe(batchJobAdapter);
    expect(kinds.ofManifest('ray.io/v1alpha1', 'RayJob')).toBeUndefined();
    expect(kinds.describe()).toBe(
      'job (batch/v1 Job), raycluster (ray.io/v1 RayCluster), rayjob (ray.io/v1 RayJob)',
    );
  });

  it('selects a comma-separated filter in the dispatched order, every kind without one, and sets unknown names apart', () => {
    expect(kinds.select(undefined).adapters).toEqual([batchJobAdapter, rayClusterAdapter, rayJobAdapter]);
    expect(kinds.select('rayjob,job')).toEqual({ adapters: [batchJobAdapter, rayJobAdapter], unknown: [] });
    expect(kinds.select('job,rayservice')).toEqual({ adapters: [batchJobAdapter], unknown: ['rayservice'] });
  });

  it('refuses an unknown kind: 400 in a filter (the field named), 404 in a path, 422 in a manifest', () => {
    const filter = problemOf(() => kinds.selectOrRefuse('job,rayservice', 'querystring.kind'));
    expect(filter.status).toBe(400);
    expect(filter.code).toBe('validation-failed');
    expect(filter.extra.errors?.[0]?.path).toBe('querystring.kind');
    expect(filter.message).toContain('unknown kind "rayservice"; this API shows job (batch/v1 Job)');

    const path = problemOf(() => kinds.namedOrNotFound('rayservice'));
    expect(path.status).toBe(404);
    expect(path.code).toBe('not-found');

    const manifest = problemOf(() => kinds.ofManifestOrRefuse('ray.io/v1', 'RayService'));
    expect(manifest.status).toBe(422);
    expect(manifest.code).toBe('unsupported-kind');
    expect(manifest.message).toBe(
      'ray.io/v1 RayService is not a kind jobrelay dispatches here; the dispatched kinds are job (batch/v1 Job), raycluster (ray.io/v1 RayCluster), rayjob (ray.io/v1 RayJob)',
    );
    expect(manifest.toProblem('/api/v1/placement-preview')).toMatchObject({
      type: 'https://jobrelay.dev/problems/unsupported-kind',
      status: 422,
      title: 'Kind not dispatched',
    });
  });

  it('says when the management cluster serves none of the kinds', () => {
    expect(new WorkloadKinds([]).describe()).toMatch(/^none/);
    expect(
      () =>
        new WorkloadKinds([
          { adapter: batchJobAdapter, managedBy: 'a/b' },
          { adapter: batchJobAdapter, managedBy: 'a/c' },
        ]),
    ).toThrow(/two dispatched kinds/);
  });
});

describe('permissions: each kind’s own group and plural, never batch/jobs for another kind', () => {
  it('checks Ray kinds in ray.io, Jobs in batch', () => {
    expect(onKind(rayClusterAdapter, 'get', 'team-a', 'demo')).toEqual({
      verb: 'get',
      group: 'ray.io',
      resource: 'rayclusters',
      namespace: 'team-a',
      name: 'demo',
    });
    expect(onKinds([batchJobAdapter, rayJobAdapter], 'list')).toEqual([
      { verb: 'list', group: 'batch', resource: 'jobs' },
      { verb: 'list', group: 'ray.io', resource: 'rayjobs' },
    ]);
    expect(onKind(batchJobAdapter, 'watch', 'team-a')).toEqual({
      verb: 'watch',
      group: 'batch',
      resource: 'jobs',
      namespace: 'team-a',
    });
  });
});
