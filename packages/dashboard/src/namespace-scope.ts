/**
 * The dashboard's scope: every namespace, or one, for a caller whose RBAC stops at a
 * namespace (a Role, not a ClusterRole). Pure, so the sign-in form and the pages agree on it.
 */
// The names module alone: the package's index holds the Node-side clients.
import { dns1123Label } from '@jobrelay/kube/kubernetes-names';

export type NamespaceInput = { ok: true; namespace: string | undefined } | { ok: false; message: string };

/** The sign-in form's namespace field: empty is every namespace; else it must be a namespace name. */
export function readNamespace(text: string): NamespaceInput {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, namespace: undefined };
  if (trimmed.length <= 63 && dns1123Label.test(trimmed)) return { ok: true, namespace: trimmed };
  return {
    ok: false,
    message: `“${trimmed.slice(0, 80)}” is not a namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters. Leave it empty for every namespace.`,
  };
}

/** `path` limited to `namespace` by its query parameter; unchanged for every namespace. */
export function inNamespace(path: string, namespace: string | undefined): string {
  if (namespace === undefined) return path;
  const separator = path.includes('?') ? '&' : '?';
  return `${path}${separator}namespace=${encodeURIComponent(namespace)}`;
}
