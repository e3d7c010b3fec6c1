import { isAlreadyExists, isNotFound } from '@jobrelay/kube';
import { RecordKeyring } from './record-seal.ts';

/** The Secret, in jobrelay's namespace, holding the keys placement records are sealed with. */
export const recordKeySecretName = 'jobrelay-record-key';
/** The data key of the current (sealing) key; every data key starting `previous` still verifies. */
export const currentRecordKeyField = 'key';
const previousRecordKeyPrefix = 'previous';

/** What this module needs of client-node's CoreV1Api (structural, so tests and callers pick). */
export interface RecordKeySecrets {
  readNamespacedSecret(request: {
    name: string;
    namespace: string;
  }): Promise<{ data?: { [key: string]: string } }>;
  createNamespacedSecret(request: {
    namespace: string;
    body: {
      metadata: { name: string; namespace: string; labels?: Record<string, string> };
      type: string;
      data: Record<string, string>;
    };
  }): Promise<unknown>;
}

/**
 * The keyring in a Secret's data (values base64, as the API returns them). Errors name the
 * Secret and the data key at fault, never a value.
 */
export function recordKeyringFromSecretData(
  data: { [key: string]: string } | undefined,
  where: string,
): RecordKeyring {
  const current = data?.[currentRecordKeyField];
  if (!current) {
    throw new Error(`Secret ${where} has no data key ${JSON.stringify(currentRecordKeyField)}`);
  }
  const decode = (field: string, value: string) => {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length === 0) throw new Error(`Secret ${where}: data key ${field} is empty`);
    return bytes;
  };
  const previous = Object.entries(data ?? {})
    .filter(([field]) => field.startsWith(previousRecordKeyPrefix))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([field, value]) => decode(field, value));
  try {
    return new RecordKeyring(decode(currentRecordKeyField, current), previous);
  } catch (err) {
    throw new Error(`Secret ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Reads the record keys; when `createIfMissing` (the controller) and there is no Secret yet,
 * creates it with a fresh random key. Two replicas starting together both try: the one whose
 * create loses reads the winner's.
 */
export async function loadRecordKeyring(
  secrets: RecordKeySecrets,
  namespace: string,
  options: { createIfMissing: boolean },
): Promise<{ keyring: RecordKeyring; created: boolean }> {
  const where = `${namespace}/${recordKeySecretName}`;
  const read = async () => {
    const secret = await secrets.readNamespacedSecret({ name: recordKeySecretName, namespace });
    return recordKeyringFromSecretData(secret.data, where);
  };
  try {
    return { keyring: await read(), created: false };
  } catch (err) {
    if (!isNotFound(err) || !options.createIfMissing) throw err;
  }
  try {
    await secrets.createNamespacedSecret({
      namespace,
      body: {
        metadata: {
          name: recordKeySecretName,
          namespace,
          labels: { 'app.kubernetes.io/part-of': 'jobrelay' },
        },
        type: 'Opaque',
        data: { [currentRecordKeyField]: RecordKeyring.generateKey().toString('base64') },
      },
    });
    return { keyring: await read(), created: true };
  } catch (err) {
    if (isAlreadyExists(err)) return { keyring: await read(), created: false };
    throw err;
  }
}
