import {
  loadRecordKeyring,
  type PlacementRecord,
  placementRecordOf,
  RecordKeyring,
  type RecordKeySecrets,
} from '@jobrelay/placement';
import type { Logger } from 'pino';

/**
 * The keys the API checks placement records with, as the controller seals them (Secret
 * jobrelay-record-key). Until that Secret has been read, a random key nobody holds: no record
 * is believed, and every workload shows as not placed (before the controller first ran there
 * is no record to believe anyway). A record that is not jobrelay's is never shown as where a
 * workload runs: the controller places such a workload again from scratch.
 */
let keys = new RecordKeyring(RecordKeyring.generateKey());
let version = 0;

/** The keys records are checked with now. */
export function recordKeys(): RecordKeyring {
  return keys;
}

/** Bumped whenever the keys change: views computed from records before must be computed again. */
export function recordKeysVersion(): number {
  return version;
}

/** From now on, records sealed by `keyring` are believed (the API's start, and tests). */
export function trustRecordsSealedBy(keyring: RecordKeyring): void {
  keys = keyring;
  version += 1;
}

/** The workload's placement record when jobrelay sealed it for that workload; else undefined. */
export function placementOf(object: Parameters<typeof placementRecordOf>[0]): PlacementRecord | undefined {
  const parsed = placementRecordOf(object, keys);
  return parsed.kind === 'ok' ? parsed.record : undefined;
}

/**
 * Reads the record keys (never creates them: that is the controller's). Resolves `true` once
 * loaded; on a failure it warns once and, unless `stopped`, tries again every `retryMs` in the
 * background, resolving `false` at once so a start is not held up by a controller not yet run.
 */
export async function loadRecordKeys(
  secrets: RecordKeySecrets,
  namespace: string,
  log: Logger,
  options: { retryMs: number; stopped: () => boolean; loaded?: () => void },
): Promise<boolean> {
  const attempt = async () => {
    const { keyring } = await loadRecordKeyring(secrets, namespace, { createIfMissing: false });
    trustRecordsSealedBy(keyring);
    log.info({ keyId: keyring.currentKeyId }, 'loaded the placement record keys');
    options.loaded?.();
  };
  try {
    await attempt();
    return true;
  } catch (err) {
    log.warn(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'cannot read the placement record keys yet (the controller creates them); no placement is shown until then',
    );
  }
  const retry = () => {
    if (options.stopped()) return;
    setTimeout(() => {
      if (options.stopped()) return;
      attempt().catch(retry);
    }, options.retryMs).unref();
  };
  retry();
  return false;
}
