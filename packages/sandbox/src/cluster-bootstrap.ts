import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1Node } from '@kubernetes/client-node';
import type { ClusterState, NodeShape } from './sandbox-state.ts';

function isAlreadyExists(err: unknown): boolean {
  return (err as { code?: number }).code === 409;
}

async function createUnlessExists(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

export function sandboxNode(cluster: string, index: number, shape: NodeShape): V1Node {
  const name = `${cluster}-node-${index}`;
  const resources: Record<string, string> = { cpu: shape.cpu, memory: shape.memory, pods: '110' };
  if (shape.gpus) resources['nvidia.com/gpu'] = String(shape.gpus);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': `sandbox-${shape.cpu}cpu`,
        type: 'kwok',
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { providerID: `kwok://${name}` },
    // A Node's status is accepted on create (that is how the kubelet registers); KWOK then
    // keeps it Ready without touching the capacity.
    status: { allocatable: resources, capacity: resources },
  };
}

/** Idempotent: RBAC for the test identities and the cluster's fake nodes. */
export async function bootstrapCluster(adminKubeconfigPath: string, cluster: ClusterState): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfigPath);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await createUnlessExists(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'sandbox-viewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
      },
    }),
  );
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < cluster.nodes.count; i++) {
    await createUnlessExists(() => core.createNode({ body: sandboxNode(cluster.name, i, cluster.nodes) }));
  }
}
