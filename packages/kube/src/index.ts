export {
  describeApiError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  reasonOf,
  refusalOf,
  statusCodeOf,
} from './api-errors.ts';
export { type Clock, systemClock } from './clock.ts';
export {
  type ClusterApiClients,
  type ClusterClientOptions,
  makeClusterApiClients,
  sharedPoolConfiguration,
} from './cluster-api-clients.ts';
export { EventRecorder, type RecordedEvent } from './event-recorder.ts';
export { ConfigError, configFileFlag, type FlagConfigOptions, loadFlagConfig } from './flag-config.ts';
export { dns1123Label, dns1123Subdomain, labelValuePattern } from './kubernetes-names.ts';
export { logRedaction, printableConfig, redactUrlCredentials } from './log-redaction.ts';
export { mapWithConcurrency } from './map-with-concurrency.ts';
export { microTime } from './micro-time.ts';
export { defaultOriginId } from './origin-identity.ts';
export { mergePatch } from './patch.ts';
export {
  type ObjectMeta,
  type PlainJson,
  type PodSpec,
  type PodTemplateSpec,
  rfc3339Seconds,
} from './plain-json.ts';
export { getPlainJson } from './plain-json-get.ts';
export { requestVerb } from './request-verb.ts';
export {
  failedWatchesBeforeRelist,
  type InformableObject,
  type InformerEvent,
  informerRelists,
  informerRelistsCounter,
  type ListPage,
  objectKey,
  type RelistReason,
  ResilientInformer,
  type ResilientInformerOptions,
  stripManagedFields,
} from './resilient-informer.ts';
export { TokenBucket } from './token-bucket.ts';
export { undiciHttpLibrary } from './undici-http-library.ts';
export { LineSplitter, UndiciWatch } from './undici-watch.ts';
export { unlessConflict, type WriteOutcome } from './unless-conflict.ts';
export { TimeoutError, withTimeout } from './with-timeout.ts';
