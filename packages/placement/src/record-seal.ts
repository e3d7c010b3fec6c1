import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Which workload a placement record belongs to. The UID is what makes a record of one workload
 * worthless on another (names are reused; UIDs never are); namespace and name are bound too, so
 * a seal says plainly whose record it is.
 */
export interface SealSubject {
  namespace: string;
  name: string;
  uid: string;
}

/** How a seal compares with the record and workload it sits on. */
export type SealCheck =
  | { kind: 'valid' }
  /** No seal, a malformed one, or one that does not match under a key jobrelay holds. */
  | { kind: 'invalid'; problem: string }
  /** Sealed under a key jobrelay does not hold (lost, or rotated out): nothing can be said. */
  | { kind: 'unknown-key'; keyId: string };

/** Seals are `v1.<key id>.<HMAC-SHA256, base64url>`. */
const sealFormat = /^v1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

/** Key material below this length is refused: an HMAC key should be as long as its hash. */
export const minimumRecordKeyBytes = 32;

function keyIdOf(key: Buffer): string {
  // A name for the key that reveals nothing of it: a hash of it, domain-separated.
  return createHash('sha256').update('jobrelay.dev/record-key-id\0').update(key).digest('hex').slice(0, 16);
}

/** JSON with object keys sorted at every level, so equal records give equal bytes. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The keys jobrelay seals its placement records with: one current key that seals, and older
 * ones that still verify (key rotation). Keys come from a Secret in jobrelay's namespace; whoever
 * may read that Secret may forge records, exactly as whoever may act as the controller may.
 */
export class RecordKeyring {
  private readonly current: { id: string; key: Buffer };
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length < minimumRecordKeyBytes) {
        throw new Error(
          `a record key must hold at least ${minimumRecordKeyBytes} bytes, this one holds ${key.length}`,
        );
      }
    }
    this.current = { id: keyIdOf(current), key: Buffer.from(current) };
    const byId = new Map<string, Buffer>();
    for (const key of [...previous, current]) byId.set(keyIdOf(key), Buffer.from(key));
    this.byId = byId;
  }

  /** A fresh random key, for a new installation. */
  static generateKey(): Buffer {
    return randomBytes(minimumRecordKeyBytes);
  }

  /** The current key's id (not secret): shown in logs so operators can tell keys apart. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /** The seal of `record` (without any seal of its own) on `subject`, under the current key. */
  seal(record: object, subject: SealSubject): string {
    return `v1.${this.current.id}.${this.mac(this.current.key, record, subject).toString('base64url')}`;
  }

  /** Whether `seal` is this keyring's seal of `record` on `subject`. Constant-time comparison. */
  check(seal: string | undefined, record: object, subject: SealSubject): SealCheck {
    if (seal === undefined) return { kind: 'invalid', problem: 'it carries no seal' };
    const parts = sealFormat.exec(seal);
    if (!parts) return { kind: 'invalid', problem: 'its seal is malformed' };
    const [, keyId, mac] = parts as unknown as [string, string, string];
    const key = this.byId.get(keyId);
    if (!key) return { kind: 'unknown-key', keyId };
    const expected = this.mac(key, record, subject);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return {
        kind: 'invalid',
        problem:
          'its seal does not match this workload and record (written, changed or copied by someone else)',
      };
    }
    return { kind: 'valid' };
  }

  private mac(key: Buffer, record: object, subject: SealSubject): Buffer {
    return createHmac('sha256', key)
      .update('jobrelay.dev/placement v1\0')
      .update(canonicalJson({ uid: subject.uid, namespace: subject.namespace, name: subject.name }))
      .update('\0')
      .update(canonicalJson(record))
      .digest();
  }
}
