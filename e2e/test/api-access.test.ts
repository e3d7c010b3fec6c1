// The admin API's authentication and authorization, as the API will make them: TokenReviews
// and SubjectAccessReviews created by the API's own identity (the `jobrelay-api`
// ServiceAccount's token, with deploy/api's RBAC) against the
// real management apiserver, for the sandbox identities installApiAccess() binds to
// deploy/api's roles.
import { type Identity, installApiAccess, systemNamespace, teamNamespace } from '@jobrelay/sandbox';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { statusCodeOf, testSandbox } from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();

function kubeConfigOf(identity: Identity): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name, identity));
  return kubeConfig;
}

const asApi = new KubeConfig();
asApi.loadFromFile(sandbox.serviceAccountKubeconfigPath('jobrelay-api'));
const authn = asApi.makeApiClient(AuthenticationV1Api);
const authz = asApi.makeApiClient(AuthorizationV1Api);

/** Whether `user` may do `attributes`, as the management apiserver answers the API's SAR. */
async function allowed(user: string, attributes: V1ResourceAttributes): Promise<boolean> {
  const review = await authz.createSubjectAccessReview({
    body: { spec: { user, resourceAttributes: attributes } },
  });
  return review.status?.allowed === true;
}

const drainWorker = {
  group: 'jobrelay.dev',
  resource: 'workerclusters',
  subresource: 'drain',
  verb: 'update',
};
const cordonWorker = { ...drainWorker, subresource: 'cordon' };
const listWorkers = { group: 'jobrelay.dev', resource: 'workerclusters', verb: 'list' };
const createCredentials = { resource: 'secrets', verb: 'create', namespace: systemNamespace };
const teamLogs = { resource: 'pods', subresource: 'log', verb: 'get', namespace: teamNamespace };
const defaultLogs = { ...teamLogs, namespace: 'default' };

beforeAll(async () => {
  // The global set-up installed it already: a second run must change nothing and not fail.
  await installApiAccess(sandbox);
});

describe('TokenReview by the jobrelay-api identity', () => {
  it("authenticates fleet-admin's token as the user fleet-admin", async () => {
    const review = await authn.createTokenReview({ body: { spec: { token: sandbox.token('fleet-admin') } } });
    expect(review.status?.authenticated).toBe(true);
    expect(review.status?.user?.username).toBe('fleet-admin');
    expect(review.status?.user?.groups).toContain('system:authenticated');
    expect(review.status?.user?.groups).not.toContain('system:masters');
  });

  it('does not authenticate a token nobody was given', async () => {
    const review = await authn.createTokenReview({
      body: { spec: { token: `${sandbox.token('fleet-admin')}x` } },
    });
    expect(review.status?.authenticated ?? false).toBe(false);
    expect(review.status?.user?.username).toBeUndefined();
  });
});

describe('SubjectAccessReview by the jobrelay-api identity', () => {
  it('lets fleet-admin drain and cordon workers and write credentials in jobrelay-system only', async () => {
    expect(await allowed('fleet-admin', drainWorker)).toBe(true);
    expect(await allowed('fleet-admin', cordonWorker)).toBe(true);
    expect(await allowed('fleet-admin', createCredentials)).toBe(true);
    expect(await allowed('fleet-admin', { ...createCredentials, namespace: 'default' })).toBe(false);
  });

  it('lets viewer list workers, but neither cordon one nor create credentials', async () => {
    expect(await allowed('viewer', listWorkers)).toBe(true);
    expect(await allowed('viewer', cordonWorker)).toBe(false);
    expect(await allowed('viewer', createCredentials)).toBe(false);
  });

  it('lets team-a read pod logs in team-a only, and not list workers', async () => {
    expect(await allowed('team-a', teamLogs)).toBe(true);
    expect(await allowed('team-a', defaultLogs)).toBe(false);
    expect(await allowed('team-a', listWorkers)).toBe(false);
  });

  it('lets nobody do none of it', async () => {
    for (const attributes of [drainWorker, cordonWorker, listWorkers, createCredentials, teamLogs]) {
      expect(await allowed('nobody', attributes), JSON.stringify(attributes)).toBe(false);
    }
  });

  it('keeps the API process to its own role: no node deletion, Secrets in jobrelay-system only, never listed', async () => {
    const apiServiceAccount = `system:serviceaccount:${systemNamespace}:jobrelay-api`;
    expect(await allowed(apiServiceAccount, { resource: 'nodes', verb: 'delete' })).toBe(false);
    for (const verb of ['get', 'create', 'delete'])
      expect(
        await allowed(apiServiceAccount, { resource: 'secrets', verb, namespace: systemNamespace }),
        verb,
      ).toBe(true);
    // A list or watch would hand it every Secret of jobrelay-system; it reads them one by one.
    for (const verb of ['list', 'watch'])
      expect(
        await allowed(apiServiceAccount, { resource: 'secrets', verb, namespace: systemNamespace }),
        verb,
      ).toBe(false);
    expect(await allowed(apiServiceAccount, { resource: 'secrets', verb: 'get', namespace: 'default' })).toBe(
      false,
    );
    // The apiserver enforces what the review says: authorization is checked before the node is looked up.
    const core = asApi.makeApiClient(CoreV1Api);
    expect(await statusCodeOf(core.deleteNode({ name: 'no-such-node' }))).toBe(403);
  });
});

describe('the reviews match what the apiserver enforces', () => {
  it('viewer lists WorkerClusters but gets 403 creating a Secret in jobrelay-system', async () => {
    const viewer = kubeConfigOf('viewer');
    const list = await viewer.makeApiClient(CustomObjectsApi).listClusterCustomObject({
      group: 'jobrelay.dev',
      version: 'v1alpha1',
      plural: 'workerclusters',
    });
    expect(Array.isArray((list as { items?: unknown[] }).items)).toBe(true);
    const code = await statusCodeOf(
      viewer.makeApiClient(CoreV1Api).createNamespacedSecret({
        namespace: systemNamespace,
        body: { metadata: { name: 'viewer-may-not' }, stringData: { kubeconfig: '' } },
      }),
    );
    expect(code).toBe(403);
  });

  it('an identity without the API role cannot ask SubjectAccessReviews at all', async () => {
    const code = await statusCodeOf(
      kubeConfigOf('nobody')
        .makeApiClient(AuthorizationV1Api)
        .createSubjectAccessReview({
          body: { spec: { user: 'fleet-admin', resourceAttributes: listWorkers } },
        }),
    );
    expect(code).toBe(403);
  });
});
