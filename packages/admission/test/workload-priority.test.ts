import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { priorityClassLookup, workloadPriority } from '../src/workload-priority.ts';

const classes = priorityClassLookup([
  { metadata: { name: 'batch-low' }, value: 100 },
  { metadata: { name: 'batch-high' }, value: 1000 },
  { metadata: { name: 'below-zero' }, value: -50 },
  { metadata: { name: 'system-cluster-critical' }, value: 2_000_000_000 },
]);
const withDefault = priorityClassLookup([
  { metadata: { name: 'batch-low' }, value: 100 },
  { metadata: { name: 'batch-high' }, value: 1000 },
  { metadata: { name: 'standard' }, value: 500, globalDefault: true },
]);

const template = (priorityClassName?: string) => ({
  spec: priorityClassName === undefined ? {} : { priorityClassName },
});

describe('workloadPriority', () => {
  it('is the named class’s value', () => {
    expect(workloadPriority([template('batch-high')], classes)).toEqual({
      kind: 'ok',
      priority: 1000,
      className: 'batch-high',
    });
    expect(workloadPriority([template('below-zero')], classes)).toEqual({
      kind: 'ok',
      priority: -50,
      className: 'below-zero',
    });
  });

  it('is the highest of several templates', () => {
    expect(workloadPriority([template('batch-low'), template('batch-high'), template()], classes)).toEqual({
      kind: 'ok',
      priority: 1000,
      className: 'batch-high',
    });
  });

  it('gives a template without a class the global default, else 0', () => {
    expect(workloadPriority([template()], withDefault)).toEqual({
      kind: 'ok',
      priority: 500,
      className: 'standard',
    });
    expect(workloadPriority([template()], classes)).toEqual({ kind: 'ok', priority: 0 });
    // An empty name is no name, as Kubernetes reads it.
    expect(workloadPriority([template('')], withDefault)).toEqual({
      kind: 'ok',
      priority: 500,
      className: 'standard',
    });
    // The default counts against the named classes: 500 beats batch-low's 100.
    expect(workloadPriority([template('batch-low'), template()], withDefault)).toEqual({
      kind: 'ok',
      priority: 500,
      className: 'standard',
    });
    // Without a default, a template with no class is 0, above a negative class.
    expect(workloadPriority([template('below-zero'), template()], classes)).toEqual({
      kind: 'ok',
      priority: 0,
    });
  });

  it('treats no templates as one pod that names no class', () => {
    expect(workloadPriority(undefined, withDefault)).toEqual({
      kind: 'ok',
      priority: 500,
      className: 'standard',
    });
    expect(workloadPriority([], classes)).toEqual({ kind: 'ok', priority: 0 });
  });

  it('refuses a class that does not exist, as the Priority admission plugin refuses the pods', () => {
    expect(workloadPriority([template('batch-high'), template('urgent')], classes)).toEqual({
      kind: 'refused',
      message:
        'PriorityClass "urgent" does not exist: create it, or name an existing class in the pod template\'s priorityClassName',
    });
    const twice = workloadPriority([template('urgent'), template('urgent'), template('vip')], classes);
    expect(twice).toMatchObject({ kind: 'refused' });
    if (twice.kind === 'refused') {
      expect(twice.message.match(/PriorityClass "urgent"/g)).toHaveLength(1);
      expect(twice.message).toContain('PriorityClass "vip" does not exist');
    }
  });

  it('is never below any template’s own priority, for any templates', () => {
    const names = ['batch-low', 'batch-high', 'standard', '', undefined] as const;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...names), { maxLength: 5 }), (chosen) => {
        const result = workloadPriority(chosen.map(template), withDefault);
        if (result.kind !== 'ok') throw new Error(`refused: ${result.message}`);
        const each = (chosen.length === 0 ? [undefined] : chosen).map((name) =>
          name ? withDefault.get(name)!.value : 500,
        );
        expect(result.priority).toBe(Math.max(...each));
        expect(result.className === undefined ? 0 : (withDefault.get(result.className)?.value ?? NaN)).toBe(
          result.priority,
        );
      }),
    );
  });
});

describe('priorityClassLookup', () => {
  it('finds classes by name', () => {
    expect(classes.get('batch-low')).toEqual({ value: 100 });
    expect(classes.get('nope')).toBeUndefined();
    // A name is data: what every object inherits is not a class.
    expect(classes.get('constructor')).toBeUndefined();
    expect(classes.globalDefault()).toBeUndefined();
    expect(withDefault.globalDefault()).toEqual({ name: 'standard', value: 500 });
  });

  it('picks the highest default when a cache sees several, then the first name', () => {
    const lookup = priorityClassLookup([
      { metadata: { name: 'old-default' }, value: 10, globalDefault: true },
      { metadata: { name: 'zeta' }, value: 20, globalDefault: true },
      { metadata: { name: 'alpha' }, value: 20, globalDefault: true },
      { metadata: { name: 'not-default' }, value: 99, globalDefault: false },
    ]);
    expect(lookup.globalDefault()).toEqual({ name: 'alpha', value: 20 });
  });

  it('skips objects without a name or an integer value', () => {
    const lookup = priorityClassLookup([
      { value: 5, globalDefault: true },
      { metadata: { name: 'fraction' }, value: 1.5, globalDefault: true },
      { metadata: { name: 'missing' } },
    ]);
    expect(lookup.get('fraction')).toBeUndefined();
    expect(lookup.get('missing')).toBeUndefined();
    expect(lookup.globalDefault()).toBeUndefined();
  });
});
