// k8s.io/apimachinery/pkg/util/validation: the name formats every jobrelay process checks.

/** A DNS-1123 label (namespace, WorkerCluster and container names); also at most 63 characters. */
export const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1123 subdomain (Job and pod names); also at most 253 characters. */
export const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label value (may be empty); also at most 63 characters. */
export const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
