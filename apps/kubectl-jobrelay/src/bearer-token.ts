import type { RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { inlineUser, type ResolvedContext } from './kubeconfig-files.ts';
import { OperationError, UnreachableError } from './plugin-errors.ts';

/**
 * The bearer token kubectl would send for this context, obtained through client-node's own auth
 * (static token, tokenFile, exec credential plugins, auth-provider token files), so the API sees
 * the same identity kubectl does. The token is only ever put in an Authorization header.
 */
export async function bearerTokenFor(resolved: ResolvedContext): Promise<string> {
  if (!resolved.user) {
    throw new UnreachableError(
      `context "${resolved.contextName}" has no user: the jobrelay API needs a bearer token. ${howToGetToken}`,
    );
  }
  let user: Record<string, unknown>;
  try {
    // client-node knows `token-file` but not kubectl's `tokenFile`: inline it first.
    user = inlineUser(resolved.user.fields);
  } catch (err) {
    throw new UnreachableError(err instanceof OperationError ? err.message : String(err));
  }
  const kubeConfig = new KubeConfig();
  // The token belongs to the user alone; the cluster entry is a placeholder so that nothing about
  // the management cluster's own endpoint (an http:// server, a missing CA file) stands in the way.
  kubeConfig.loadFromString(
    JSON.stringify({
      clusters: [{ name: 'jobrelay-api', cluster: { server: 'https://jobrelay-api.invalid' } }],
      users: [{ name: resolved.user.name, user }],
      contexts: [{ name: 'jobrelay', context: { cluster: 'jobrelay-api', user: resolved.user.name } }],
      'current-context': 'jobrelay',
    }),
  );
  const options: RequestOptions = {};
  try {
    await kubeConfig.applyToHTTPSOptions(options);
  } catch (err) {
    // Exec plugins fail with their stderr as the message; it names the plugin's problem.
    const message = err instanceof Error ? err.message.trim() : String(err);
    throw new UnreachableError(
      `could not get credentials for context "${resolved.contextName}"${message ? `: ${message}` : ''}`,
    );
  }
  const authorization = (options.headers as Record<string, unknown> | undefined)?.Authorization;
  if (typeof authorization === 'string' && authorization.startsWith('Bearer ')) {
    const token = authorization.slice('Bearer '.length).trim();
    if (token) return token;
  }
  if (options.cert !== undefined || user['client-certificate-data'] !== undefined) {
    throw new UnreachableError(
      `context "${resolved.contextName}" authenticates with a client certificate only; the jobrelay API ` +
        `needs a bearer token (it identifies callers by TokenReview, which cannot check certificates). ${howToGetToken}`,
    );
  }
  if (user.username !== undefined) {
    throw new UnreachableError(
      `context "${resolved.contextName}" uses basic authentication; the jobrelay API needs a bearer token. ${howToGetToken}`,
    );
  }
  throw new UnreachableError(
    `context "${resolved.contextName}" has no bearer token for the jobrelay API. ${howToGetToken}`,
  );
}

const howToGetToken =
  'Use a context whose user has a token, e.g. for a ServiceAccount: ' +
  '`kubectl config set-credentials jobrelay-admin --token="$(kubectl create token SA -n NS)"` and ' +
  '`kubectl config set-context --current --user jobrelay-admin`, or an exec credential plugin that returns a token.';
