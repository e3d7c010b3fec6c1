// Namespaces jobrelay never dispatches from. Their workloads belong to the cluster itself
// (kube-system's controllers, kube-public, kube-node-lease), to whoever owns `default` on
// each cluster, or to jobrelay (its own namespace holds worker kubeconfigs): a Job there with
// jobrelay's managedBy would land in the same namespace on a worker, which means another
// owner there, so it is never placed.

/** Why a workload in `namespace` is never dispatched, or undefined when it may be. */
export function systemNamespaceProblem(namespace: string, systemNamespace: string): string | undefined {
  const system = namespace.startsWith('kube-') || namespace === 'default' || namespace === systemNamespace;
  return system
    ? `namespace ${namespace} is a system namespace: jobrelay never dispatches from it`
    : undefined;
}
