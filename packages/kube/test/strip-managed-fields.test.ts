import { describe, expect, it } from 'vitest';
import { stripManagedFields } from '../src/resilient-informer.ts';

describe('stripManagedFields', () => {
  it('drops managedFields and keeps the rest of the metadata', () => {
    const job = {
      metadata: {
        name: 'a',
        namespace: 'ns',
        resourceVersion: '7',
        labels: { team: 'x' },
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { parallelism: 1 },
    };
    const stripped = stripManagedFields(job);
    expect(stripped).toBe(job);
    expect(stripped).toEqual({
      metadata: { name: 'a', namespace: 'ns', resourceVersion: '7', labels: { team: 'x' } },
      spec: { parallelism: 1 },
    });
    expect('managedFields' in stripped.metadata).toBe(false);
  });

  it('leaves an object without metadata or managedFields as it is', () => {
    expect(stripManagedFields({})).toEqual({});
    expect(stripManagedFields({ metadata: { name: 'b' } })).toEqual({ metadata: { name: 'b' } });
  });
});
