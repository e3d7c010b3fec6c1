import type { Caller } from '@jobrelay/api-types';
import { inNamespace, readNamespace } from '../src/namespace-scope.ts';
import { ApiClient, ApiError } from './api-client.ts';
import { h, replaceContent } from './dom.ts';

/**
 * The actions without which there is nothing to show: a caller with none of them, and who may
 * list no kind of workload, is refused.
 */
const readActions = ['listClusters', 'listWorkloads'];

/**
 * Asks the API who the token belongs to and what it may do (GET /api/v1/me), in one namespace
 * when `namespaceText` names one, else in every namespace. Refuses with the API's own words
 * when the token is bad, and names the missing permission when it may read nothing here.
 */
export async function signIn(
  token: string,
  namespaceText = '',
): Promise<{ ok: true; me: Caller } | { ok: false; message: string }> {
  const trimmed = token.trim();
  if (!trimmed) return { ok: false, message: 'Paste a bearer token of the management cluster first.' };
  if (/\s/.test(trimmed))
    return { ok: false, message: 'A bearer token has no spaces or line breaks; paste the token alone.' };
  const scope = readNamespace(namespaceText);
  if (!scope.ok) return { ok: false, message: scope.message };
  try {
    const me = await new ApiClient(trimmed).get<Caller>(inNamespace('/api/v1/me', scope.namespace));
    const reads = me.actions.filter((a) => readActions.includes(a.action));
    if (!reads.some((a) => a.allowed) && !me.kinds.some((kind) => kind.list)) {
      const needs = reads.map((a) => a.needs).join(', or ');
      return {
        ok: false,
        message: scope.namespace
          ? `Signed in as ${me.username}, but your RBAC allows none of the dashboard's views in namespace ${scope.namespace}: it needs ${needs}.`
          : `Signed in as ${me.username}, but your RBAC allows none of the dashboard's views in every namespace: it needs ${needs} (the jobrelay-viewer ClusterRole grants them). If your rights are in one namespace, enter it under Namespace.`,
      };
    }
    return { ok: true, me };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401)
      return {
        ok: false,
        message: `The API refused this token: ${err.message}. Use a token of the management cluster, e.g. from kubectl create token <service-account>.`,
      };
    return { ok: false, message: `Signing in failed: ${(err as Error).message}` };
  }
}

export function renderSignIn(
  root: Element,
  onSignedIn: (token: string, me: Caller) => void,
  notice?: string,
  namespace = '',
): void {
  const error = h('p', { class: 'error', role: 'alert', id: 'sign-in-error' }, notice ?? '');
  if (!notice) error.hidden = true;
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'token-help sign-in-error',
  });
  const namespaceInput = h('input', {
    id: 'namespace',
    name: 'namespace',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    value: namespace,
    placeholder: 'every namespace',
    'aria-describedby': 'namespace-help sign-in-error',
  });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'sign-in',
      'aria-labelledby': 'sign-in-title',
      onSubmit: async (event: Event) => {
        event.preventDefault();
        button.disabled = true;
        button.textContent = 'Signing in…';
        const result = await signIn(input.value, namespaceInput.value);
        button.disabled = false;
        button.textContent = 'Sign in';
        if (result.ok) {
          onSignedIn(input.value.trim(), result.me);
          return;
        }
        error.textContent = result.message;
        error.hidden = false;
        input.focus();
      },
    },
    h('h1', { id: 'sign-in-title' }, 'jobrelay dashboard'),
    h('label', { for: 'token' }, 'Bearer token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'help' },
      'A token of the management cluster (',
      h('code', null, 'kubectl create token <service-account>'),
      '). It stays in this browser tab only (session storage) and is sent to this API alone. What you see is what your RBAC allows.',
    ),
    h('label', { for: 'namespace' }, 'Namespace (optional)'),
    namespaceInput,
    h(
      'p',
      { id: 'namespace-help', class: 'help' },
      'Empty: every namespace your RBAC lets you read. If your rights stop at one namespace (a Role there), enter it: the Workloads and Pending pages then show that namespace.',
    ),
    error,
    button,
  );
  replaceContent(root, h('main', { id: 'main', class: 'sign-in-page' }, form));
  input.focus();
}
