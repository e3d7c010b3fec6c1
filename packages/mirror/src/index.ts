export { deepCopy } from './deep-copy.ts';
export * from './jobrelay-names.ts';
export { applyMergePatch } from './json-merge-patch.ts';
export { mirrorIdentityMetadata } from './mirror-identity.ts';
export { type MirrorOwnership, mirrorOwnership } from './mirror-ownership.ts';
export { heldByWorker, suspendRecordUpdate, suspendSent, suspendTransition } from './suspend-transitions.ts';
