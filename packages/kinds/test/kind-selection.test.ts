import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@jobrelay/kube';
import { afterAll, describe, expect, it } from 'vitest';
import {
  batchJobAdapter,
  chooseKinds,
  type KubeObject,
  knownKinds,
  type WorkloadKindAdapter,
} from '../src/index.ts';

/** A kind whose API accepts one managedBy value only, as KubeRay's CRDs do. */
const restricted: WorkloadKindAdapter<KubeObject> = {
  ...(batchJobAdapter as unknown as WorkloadKindAdapter<KubeObject>),
  name: 'raycluster',
  managedBy: { default: 'kueue.x-k8s.io/multikueue', accepted: ['kueue.x-k8s.io/multikueue'] },
};
const known = [batchJobAdapter, restricted];
const base = { managedBy: 'jobrelay.dev/dispatcher', kindManagedBy: [] as string[] };

function configError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('chooseKinds', () => {
  it('claims --managed-by for Jobs and each other kind’s default', () => {
    const choices = chooseKinds({ ...base, kinds: ['job', 'raycluster'] }, known);
    expect(choices.map((c) => [c.adapter.name, c.managedBy])).toEqual([
      ['job', 'jobrelay.dev/dispatcher'],
      ['raycluster', 'kueue.x-k8s.io/multikueue'],
    ]);
  });

  it('gives --managed-by to the kinds whose policy follows it, never to the others', () => {
    const follower = {
      ...restricted,
      name: 'follower',
      managedBy: { default: 'x.dev/d', followsInstallationValue: true },
    };
    const keeper = { ...restricted, name: 'keeper', managedBy: { default: 'x.dev/d' } };
    const choices = chooseKinds({ ...base, managedBy: 'example.com/ours', kinds: ['follower', 'keeper'] }, [
      follower,
      keeper,
    ]);
    expect(choices.map((c) => [c.adapter.name, c.managedBy])).toEqual([
      ['follower', 'example.com/ours'],
      ['keeper', 'x.dev/d'],
    ]);
  });

  it('takes a --kind-managed-by override, and lists a kind once however often it is named', () => {
    const choices = chooseKinds(
      { ...base, kinds: ['job', 'job'], kindManagedBy: ['job=example.com/mine'] },
      known,
    );
    expect(choices.map((c) => [c.adapter.name, c.managedBy])).toEqual([['job', 'example.com/mine']]);
  });

  it('refuses a value the kind’s API would refuse, naming the values it accepts', () => {
    expect(
      configError(() =>
        chooseKinds(
          { ...base, kinds: ['raycluster'], kindManagedBy: ['raycluster=jobrelay.dev/dispatcher'] },
          known,
        ),
      ),
    ).toBe(
      '--kind-managed-by: raycluster objects only accept spec.managedBy kueue.x-k8s.io/multikueue (their API refuses any other value), got "jobrelay.dev/dispatcher"',
    );
  });

  it('refuses unknown kinds in either flag, listing the known ones', () => {
    expect(configError(() => chooseKinds({ ...base, kinds: ['jobset'] }, known))).toBe(
      '--kinds: unknown kind "jobset"; known kinds: job, raycluster',
    );
    expect(
      configError(() => chooseKinds({ ...base, kinds: ['job'], kindManagedBy: ['pod=x.io/y'] }, known)),
    ).toBe('--kind-managed-by: unknown kind "pod"; known kinds: job, raycluster');
  });
});

describe('knownKinds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobrelay-kinds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('is the built-in kinds without a generic kinds file', () => {
    expect(knownKinds({}).map((k) => k.name)).toEqual(['job', 'raycluster', 'rayjob']);
  });

  it('adds the generic kinds of the file, labelled as such', () => {
    const path = file(
      'jobset.yaml',
      'name: jobset\ngroup: jobset.x-k8s.io\nversion: v1alpha2\nkind: JobSet\nplural: jobsets\nmanagedBy:\n  default: jobrelay.dev/dispatcher\nfinishedConditions:\n  - type: Completed\n    status: "True"\n',
    );
    const kinds = knownKinds({ genericKindsFile: path });
    expect(kinds.map((k) => [k.name, k.verification])).toEqual([
      ['job', 'real-controller'],
      ['raycluster', 'real-controller'],
      ['rayjob', 'real-controller'],
      ['jobset', 'generic-untested'],
    ]);
  });

  it('refuses an unreadable file, a malformed one (naming the field) and a built-in name', () => {
    expect(configError(() => knownKinds({ genericKindsFile: join(dir, 'missing.yaml') }))).toMatch(
      /^--generic-kinds-file: cannot read .*missing\.yaml/,
    );
    const bad = file('bad.yaml', 'name: jobset\ngroup: jobset.x-k8s.io\n');
    expect(configError(() => knownKinds({ genericKindsFile: bad }))).toMatch(
      /^--generic-kinds-file .*bad\.yaml: .*version/,
    );
    const clash = file(
      'clash.yaml',
      'name: raycluster\ngroup: ray.io\nversion: v1\nkind: RayCluster\nplural: rayclusters\nmanagedBy:\n  default: kueue.x-k8s.io/multikueue\n',
    );
    expect(configError(() => knownKinds({ genericKindsFile: clash }))).toBe(
      '--generic-kinds-file: "raycluster" is a built-in kind\'s name; give the generic kind another name',
    );
  });
});
