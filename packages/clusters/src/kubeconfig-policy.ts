import { z } from 'zod';
import type { KubeconfigPolicy } from './load-worker-kubeconfig.ts';
import { cidrProblem, ServerAddressDenyList } from './server-address-deny-list.ts';

const flag = z.boolean({ error: 'must be true or false (or 1 or 0)' });

/**
 * The settings of what a worker kubeconfig may hold beyond the allow-list, shared by the
 * controller's and the API's configuration (the same flags, so both vet alike):
 * `--allow-exec-plugins`, `--allow-proxy-url`, `--restrict-server-addresses`,
 * `--denied-server-cidrs`.
 */
export const kubeconfigPolicyFields = {
  /** Accept exec credential plugins in worker kubeconfigs; they run programs inside jobrelay. */
  allowExecPlugins: flag.default(false),
  /** Accept `proxy-url` on a worker's cluster (http, https and socks5 only). */
  allowProxyUrl: flag.default(false),
  /**
   * Refuse worker servers at loopback, link-local and unspecified addresses, and in
   * `deniedServerCidrs` (the pod and service ranges): for production installs, where such an
   * address can only be an attempt to reach jobrelay's own host or cluster network.
   */
  restrictServerAddresses: flag.default(false),
  deniedServerCidrs: z
    .array(
      z.string().superRefine((cidr, context) => {
        const problem = cidrProblem(cidr);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    )
    .default([]),
};

export interface KubeconfigPolicySettings {
  allowExecPlugins: boolean;
  allowProxyUrl: boolean;
  restrictServerAddresses: boolean;
  deniedServerCidrs: readonly string[];
}

/**
 * What is wrong with `deniedServerCidrs` given the other settings (the message follows the
 * flag's name), for a configuration error; undefined when the settings agree.
 */
export function kubeconfigPolicyProblem(settings: KubeconfigPolicySettings): string | undefined {
  if (settings.deniedServerCidrs.length > 0 && !settings.restrictServerAddresses)
    return 'is checked only with --restrict-server-addresses=true: set both, or neither';
  return undefined;
}

/** The vetting policy the settings describe. */
export function kubeconfigPolicyOf(settings: KubeconfigPolicySettings): KubeconfigPolicy {
  return {
    allowExecPlugins: settings.allowExecPlugins,
    allowProxyUrl: settings.allowProxyUrl,
    ...(settings.restrictServerAddresses
      ? { serverAddressDenyList: new ServerAddressDenyList(settings.deniedServerCidrs) }
      : {}),
  };
}
