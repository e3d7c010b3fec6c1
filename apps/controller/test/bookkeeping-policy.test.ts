// deploy/controller/bookkeeping-policy.yaml protects exactly the annotations and labels the
// code says the controller alone writes (packages/mirror/src/jobrelay-names.ts), on every
// built-in kind and its status, for every identity but the controller's: a key added in code without the
// policy, or a kind without its rule, fails here. e2e/test/bookkeeping-policy.test.ts proves
// what the apiserver does with it; e2e/offline/helm-chart.test.ts that the chart renders the same.
import { readFileSync } from 'node:fs';
import { builtInKinds } from '@jobrelay/kinds';
import * as jobrelayNames from '@jobrelay/mirror';
import { controllerOwnedAnnotations, controllerOwnedLabels } from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

interface ResourceRule {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
}

interface Policy {
  kind: string;
  metadata: { name: string };
  spec: {
    failurePolicy?: string;
    policyName?: string;
    validationActions?: string[];
    matchConstraints?: { resourceRules: ResourceRule[] };
    matchConditions?: Array<{ name: string; expression: string }>;
    variables?: Array<{ name: string; expression: string }>;
    validations?: Array<{ expression: string; reason?: string; messageExpression?: string }>;
  };
}

const deployDir = new URL('../../../deploy/controller/', import.meta.url);
const [policy, binding] = parseAllDocuments(
  readFileSync(new URL('bookkeeping-policy.yaml', deployDir), 'utf8'),
).map((d) => d.toJSON() as Policy);

/** The strings of a CEL list literal such as `['a', 'b']`. */
function celStrings(expression: string): string[] {
  const list = /^\s*\[(.*)\]\s*$/s.exec(expression);
  if (!list) throw new Error(`not a CEL list literal: ${expression}`);
  return [...list[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

function variable(name: string): string {
  const found = policy!.spec.variables?.find((v) => v.name === name);
  if (!found) throw new Error(`the policy has no variable ${name}`);
  return found.expression;
}

describe('the bookkeeping admission policy', () => {
  it('reserves exactly the annotations and labels the code says the controller alone writes', () => {
    expect(celStrings(variable('controllerOwnedAnnotations')).sort()).toEqual(
      [...controllerOwnedAnnotations].sort(),
    );
    expect(celStrings(variable('controllerOwnedLabels')).sort()).toEqual([...controllerOwnedLabels].sort());
  });

  it('classifies every jobrelay.dev/ key the code names: the controller’s, or one users set', () => {
    // Set by users on their workloads (README, "Per-Job annotations"); the rest are not keys.
    const userSet = [
      jobrelayNames.clusterSelectorAnnotation,
      jobrelayNames.clusterPinAnnotation,
      jobrelayNames.placementPolicyAnnotation,
    ];
    const notKeys = [jobrelayNames.defaultManagedBy, jobrelayNames.controllerName];
    const named = (Object.values(jobrelayNames) as unknown[]).filter(
      (value): value is string => typeof value === 'string' && value.startsWith('jobrelay.dev/'),
    );
    const owned: readonly string[] = [...controllerOwnedAnnotations, ...controllerOwnedLabels];
    expect(
      named.filter((key) => !owned.includes(key) && !userSet.includes(key) && !notKeys.includes(key)),
    ).toEqual([]);
    expect(owned.filter((key) => userSet.includes(key))).toEqual([]);
  });

  it('covers the objects and their status of every built-in kind, on create and update, in every version', () => {
    const rules = policy!.spec.matchConstraints?.resourceRules ?? [];
    const covered = rules.flatMap((rule) =>
      rule.apiGroups.flatMap((group) => rule.resources.map((resource) => `${group}/${resource}`)),
    );
    // A Job's /status takes metadata changes too (e2e/test/bookkeeping-policy.test.ts shows it).
    expect(covered.sort()).toEqual(
      builtInKinds
        .flatMap(({ resource: { group, plural } }) => [`${group}/${plural}`, `${group}/${plural}/status`])
        .sort(),
    );
    for (const rule of rules) {
      expect(rule.operations.sort()).toEqual(['CREATE', 'UPDATE']);
      expect(rule.apiVersions).toEqual(['*']);
    }
  });

  it('exempts the controller’s ServiceAccount of deploy/controller and no one else', () => {
    const rbac = parseAllDocuments(readFileSync(new URL('rbac.yaml', deployDir), 'utf8')).map(
      (d) => d.toJSON() as { kind: string; metadata: { name: string; namespace?: string } },
    );
    const serviceAccount = rbac.find((o) => o.kind === 'ServiceAccount')!;
    const conditions = policy!.spec.matchConditions ?? [];
    expect(conditions).toHaveLength(1);
    const exempt = /^!\(request\.userInfo\.username in (\[.*\])\)$/s.exec(conditions[0]!.expression.trim());
    expect(exempt, conditions[0]!.expression).not.toBeNull();
    expect(celStrings(exempt![1]!)).toEqual([
      `system:serviceaccount:${serviceAccount.metadata.namespace}:${serviceAccount.metadata.name}`,
    ]);
  });

  it('denies, and fails closed, through a binding of its own, installed by the kustomization', () => {
    expect(policy!.kind).toBe('ValidatingAdmissionPolicy');
    expect(policy!.spec.failurePolicy).toBe('Fail');
    expect(policy!.spec.validations?.map((v) => v.reason)).toEqual(['Forbidden']);
    expect(binding).toMatchObject({
      kind: 'ValidatingAdmissionPolicyBinding',
      spec: { policyName: policy!.metadata.name, validationActions: ['Deny'] },
    });
    const kustomization = parse(readFileSync(new URL('kustomization.yaml', deployDir), 'utf8')) as {
      resources: string[];
    };
    expect(kustomization.resources).toContain('bookkeeping-policy.yaml');
  });
});
