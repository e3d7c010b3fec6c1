import type { AgentOptions, RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { type Cluster, type DispatcherOptions, KubeConfig } from '@kubernetes/client-node';

/**
 * A KubeConfig whose direct connections resolve host names through `lookup` (a
 * ServerAddressDenyList's): wherever the worker's KubeConfig goes, so does the check. Every
 * connection to a worker is built from one of the two methods overridden here: undici pools
 * from `createDispatcherOptions` (@jobrelay/kube's connectionPool, its watches, client-node's
 * own requests) and node:https requests from `applyToHTTPSOptions` (the API's pod logs).
 * Through a proxy the proxy resolves the server's name, so nothing is added there.
 */
export class AddressGuardedKubeConfig extends KubeConfig {
  readonly #lookup: LookupFunction;

  constructor(lookup: LookupFunction) {
    super();
    this.#lookup = lookup;
  }

  override createDispatcherOptions(cluster: Cluster | null, agentOptions: AgentOptions): DispatcherOptions {
    const options = super.createDispatcherOptions(cluster, agentOptions);
    if (options.type === 'agent')
      return { ...options, connect: { ...options.connect, lookup: this.#lookup } };
    // No TLS option of its own (a CA the system trusts): client-node would use undici's global
    // dispatcher, which knows no lookup; same keep-alive as client-node's agents.
    if (options.type === 'none')
      return {
        type: 'agent',
        connect: { lookup: this.#lookup, keepAlive: true, keepAliveInitialDelay: 30_000 },
      };
    return options;
  }

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    // node:https takes `lookup` per request, on top of the agent client-node just set.
    if (!this.getCurrentCluster()?.proxyUrl) (opts as RequestOptions).lookup = this.#lookup;
  }
}
