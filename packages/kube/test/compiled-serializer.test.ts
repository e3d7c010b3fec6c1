import * as generated from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codecFor, internString, originalSerializer } from '../src/compiled-serializer.ts';

const { ObjectSerializer } = generated;

interface Attribute {
  baseName: string;
  type: string;
}

/** Runs `convert` with ObjectSerializer's own statics in place (the module may have installed ours). */
function withOriginal<T>(convert: () => T): T {
  const installed = { deserialize: ObjectSerializer.deserialize, serialize: ObjectSerializer.serialize };
  ObjectSerializer.deserialize = originalSerializer.deserialize as typeof ObjectSerializer.deserialize;
  ObjectSerializer.serialize = originalSerializer.serialize as typeof ObjectSerializer.serialize;
  try {
    return convert();
  } finally {
    ObjectSerializer.deserialize = installed.deserialize;
    ObjectSerializer.serialize = installed.serialize;
  }
}

const date = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z'));
const cache = new Map<string, fc.Arbitrary<unknown>>();

/**
 * JSON as an apiserver could send it for `type`, built from client-node's own attribute maps:
 * any subset of the fields, nulls now and then, and keys the model does not know.
 */
function jsonFor(type: string, depth = 0): fc.Arbitrary<unknown> {
  const key = `${type}@${Math.min(depth, 4)}`;
  const known = cache.get(key);
  if (known) return known;
  let arbitrary: fc.Arbitrary<unknown>;
  const lower = type.toLowerCase();
  if (lower === 'string') arbitrary = fc.string({ maxLength: 6 });
  else if (lower === 'boolean') arbitrary = fc.boolean();
  else if (['double', 'integer', 'long', 'float', 'number'].includes(lower)) arbitrary = fc.integer();
  else if (lower === 'any' || lower === 'object') arbitrary = fc.jsonValue({ maxDepth: 2 });
  else if (type === 'Date') arbitrary = date;
  else if (type.startsWith('Array<'))
    arbitrary = fc.array(jsonFor(type.slice(6, -1), depth + 1), { maxLength: depth > 3 ? 0 : 2 });
  else if (type.startsWith('{ [key: string]: '))
    arbitrary = fc.dictionary(fc.string({ maxLength: 4 }), jsonFor(type.slice(17, -3), depth + 1), {
      maxKeys: depth > 3 ? 0 : 2,
    });
  else {
    const model = (generated as unknown as Record<string, { getAttributeTypeMap?: () => Attribute[] }>)[type];
    if (!model?.getAttributeTypeMap) arbitrary = fc.jsonValue({ maxDepth: 1 });
    else if (depth > 4) arbitrary = fc.constant({});
    else {
      const fields = Object.fromEntries(
        model
          .getAttributeTypeMap()
          .map((a) => [
            a.baseName,
            fc.oneof({ weight: 9, arbitrary: jsonFor(a.type, depth + 1) }, fc.constant(null)),
          ]),
      );
      arbitrary = fc
        .tuple(
          fc.record(fields, { requiredKeys: [] }),
          fc.dictionary(fc.constantFrom('zzUnknown', 'x-extra'), fc.string()),
        )
        .map(([object, extra]) => ({ ...extra, ...object }));
    }
  }
  cache.set(key, arbitrary);
  return arbitrary;
}

// What the controller and the API convert, plus a recursive model (JSONSchemaProps).
const models = [
  'V1Job',
  'V1Pod',
  'V1Node',
  'V1Namespace',
  'V1Status',
  'EventsV1Event',
  'V1JobList',
  'V1CustomResourceDefinition',
];

describe('the compiled serializer', () => {
  it.each(models)('reads %s into the same typed model as ObjectSerializer', (type) => {
    fc.assert(
      fc.property(jsonFor(type), (json) => {
        const expected = withOriginal(() => ObjectSerializer.deserialize(json, type, ''));
        // toStrictEqual: same classes, same Dates, no key present in one and absent in the other.
        expect(codecFor(type, '').deserialize(json)).toStrictEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it.each(models)('writes %s to the same JSON as ObjectSerializer', (type) => {
    fc.assert(
      fc.property(jsonFor(type), (json) => {
        const typed = withOriginal(() => ObjectSerializer.deserialize(json, type, ''));
        const expected = withOriginal(() => JSON.stringify(ObjectSerializer.serialize(typed, type, '')));
        expect(JSON.stringify(codecFor(type, '').serialize(typed))).toBe(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('is what the generated clients call, once @jobrelay/kube is loaded', async () => {
    await import('../src/index.ts');
    expect(ObjectSerializer.deserialize).not.toBe(originalSerializer.deserialize);
    const job = ObjectSerializer.deserialize(
      { metadata: { name: 'a', creationTimestamp: '2026-12-01T10:00:00Z' } },
      'V1Job',
      '',
    ) as { metadata: { creationTimestamp: Date } };
    expect(job.metadata.creationTimestamp).toEqual(new Date('2026-12-01T10:00:00Z'));
  });
});

describe('internString', () => {
  it('always answers a string equal to its argument, whatever was seen before', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme', maxLength: 80 }))),
        (values) => {
          for (const value of values) expect(internString(value)).toBe(value);
          // Again, now that the table holds them (and evicted some by collisions).
          for (const value of [...values].reverse()) expect(internString(value)).toBe(value);
        },
      ),
    );
  });

  it('interns the string fields of deserialized models without changing them', () => {
    const wire = {
      metadata: { name: 'a', namespace: 'team', labels: { app: 'x' } },
      spec: {
        template: {
          spec: { containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent' }] },
        },
      },
    };
    const job = codecFor('V1Job', '').deserialize(JSON.parse(JSON.stringify(wire))) as {
      metadata: { namespace: string; labels: Record<string, string> };
      spec: { template: { spec: { containers: Array<{ imagePullPolicy: string }> } } };
    };
    expect(job.metadata.namespace).toBe('team');
    expect(job.metadata.labels).toEqual({ app: 'x' });
    expect(job.spec.template.spec.containers[0]!.imagePullPolicy).toBe('IfNotPresent');
  });
});
