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
 * Reads the record keys (never creates them: that is the controller's), retrying every
 * `retryMs` until the Secret exists and is readable. Resolves once loaded; `stopped` ends it.
 */
export async function loadRecordKeysUntilFound(
  secrets: RecordKeySecrets,
  namespace: string,
  log: Logger,
  options: { retryMs: number; stopped: () => boolean },
): Promise<void> {
  let warned = false;
  while (!options.stopped()) {
    try {
      const { keyring } = await loadRecordKeyring(secrets, namespace, { createIfMissing: false });
      trustRecordsSealedBy(keyring);
      log.info({ keyId: keyring.currentKeyId }, 'loaded the placement record keys');
      return;
    } catch (err) {
      if (!warned) {
        log.warn(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          'cannot read the placement record keys yet (the controller creates them); no placement is shown until then',
        );
        warned = true;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, options.retryMs).unref());
  }
}
