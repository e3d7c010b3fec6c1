import { batchJobAdapter, type JobKindAdapter, type KubeObject } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/controller-config.ts';
import { chooseKinds } from '../src/kind-selection.ts';

/** A kind whose API accepts one managedBy value only, as KubeRay's CRDs do. */
const restricted: JobKindAdapter<KubeObject> = {
  ...(batchJobAdapter as unknown as JobKindAdapter<KubeObject>),
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
