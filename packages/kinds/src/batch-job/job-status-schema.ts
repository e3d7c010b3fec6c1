import { z } from 'zod';

// The Job API stores counters as int32; a larger number is refused by the decoder (HTTP 400)
// before any validation rule runs.
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

const TIME_EXPECTATION = 'must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z';

// What Go's time.Parse(time.RFC3339, ...) accepts for metav1.Time, leniencies included (checked
// against Go 1.25/1.26): upper-case T and Z, a one-digit hour, a fraction after the seconds
// introduced by '.' or ',', and a numeric offset with a colon of up to 24:00 or 23:60.
const RFC3339_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

const NANOSECONDS_PER_MILLISECOND = 1_000_000n;

function epochMillisecondsUtc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  // Date.UTC maps two-digit years to 19xx, so the year is set separately.
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  date.setUTCFullYear(year, month - 1, day);
  const roundTrips =
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return roundTrips ? date.getTime() : undefined;
}

function parseRfc3339ToEpochNanoseconds(text: string): bigint | undefined {
  const match = RFC3339_PATTERN.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, offsetSign, offsetHours, offsetMinutes] =
    match.map((part) => part ?? '');
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  if (Number(offsetHours) > 24 || Number(offsetMinutes) > 60) return undefined;
  const localMilliseconds = epochMillisecondsUtc(
    Number(year),
    Number(month),
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
  );
  if (localMilliseconds === undefined) return undefined;
  const offsetMilliseconds =
    offsetSign === ''
      ? 0
      : (offsetSign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  // Go keeps nine fractional digits and drops the rest, so a string can carry more precision than
  // a Date; the API server compares times to the nanosecond.
  const fractionNanoseconds = BigInt((fraction ?? '').slice(0, 9).padEnd(9, '0'));
  return BigInt(localMilliseconds - offsetMilliseconds) * NANOSECONDS_PER_MILLISECOND + fractionNanoseconds;
}

/**
 * The instant a Job status time (an RFC 3339 string, as the apiserver sends and stores it)
 * denotes, in nanoseconds since the Unix epoch, with its full precision; undefined when the API
 * server could not decode it.
 */
export function kubeTimeToEpochNanoseconds(value: string): bigint | undefined {
  return parseRfc3339ToEpochNanoseconds(value);
}

const kubeTimeSchema = z
  .string({ error: TIME_EXPECTATION })
  .refine((value) => kubeTimeToEpochNanoseconds(value) !== undefined, { error: TIME_EXPECTATION });

const jobConditionSchema = z.object({
  type: z.string({ error: 'must be a condition type such as Complete or Failed' }),
  // Stricter than the API server, which stores any string here (and then treats it as not True).
  status: z.enum(['True', 'False', 'Unknown'], { error: "must be 'True', 'False' or 'Unknown'" }),
  reason: z.string({ error: 'must be a string' }).nullish(),
  message: z.string({ error: 'must be a string' }).nullish(),
  lastTransitionTime: kubeTimeSchema.nullish(),
  lastProbeTime: kubeTimeSchema.nullish(),
});

const podUidListSchema = z.array(z.string({ error: 'must be a pod UID string' }), {
  error: 'must be a list of pod UIDs',
});

function buildJobStatusSchema(counterSchema: z.ZodNumber) {
  return z.object(
    {
      active: counterSchema.nullish(),
      succeeded: counterSchema.nullish(),
      failed: counterSchema.nullish(),
      ready: counterSchema.nullish(),
      terminating: counterSchema.nullish(),
      conditions: z.array(jobConditionSchema, { error: 'must be a list of conditions' }).nullish(),
      startTime: kubeTimeSchema.nullish(),
      completionTime: kubeTimeSchema.nullish(),
      completedIndexes: z.string({ error: 'must be an index list string such as "0,2-4"' }).nullish(),
      failedIndexes: z.string({ error: 'must be an index list string such as "0,2-4"' }).nullish(),
      uncountedTerminatedPods: z
        .object(
          { succeeded: podUidListSchema.nullish(), failed: podUidListSchema.nullish() },
          { error: 'must be an object with optional succeeded and failed pod UID lists' },
        )
        .nullish(),
    },
    { error: 'must be a JobStatus object' },
  );
}

const NON_NEGATIVE_COUNTER = 'must be a non-negative integer';
const INT32_COUNTER = `must be an integer between ${INT32_MIN} and ${INT32_MAX}`;

/**
 * The shape of a batch/v1 JobStatus we are willing to write: counters are non-negative integers.
 * Unknown keys are not checked (the apiserver drops them).
 */
export const jobStatusSchema = buildJobStatusSchema(
  z
    .number({ error: NON_NEGATIVE_COUNTER })
    .int({ error: NON_NEGATIVE_COUNTER })
    .min(0, { error: NON_NEGATIVE_COUNTER })
    .max(INT32_MAX, { error: NON_NEGATIVE_COUNTER }),
);

/**
 * What the API server can decode at all. Counters may be negative here because the sign is a
 * validation rule of its own ('counters-non-negative'), and a stored old status is never
 * re-checked for it.
 */
const decodableJobStatusSchema = buildJobStatusSchema(
  z
    .number({ error: INT32_COUNTER })
    .int({ error: INT32_COUNTER })
    .min(INT32_MIN, { error: INT32_COUNTER })
    .max(INT32_MAX, { error: INT32_COUNTER }),
);

export type JobStatusShape = z.output<typeof jobStatusSchema>;

export type ParsedJobStatus = { ok: true; status: JobStatusShape } | { ok: false; problems: string[] };

/** One way a value fails to be a JobStatus: the field it concerns and a sentence naming the fix. */
export interface JobStatusShapeProblem {
  field: string;
  message: string;
}

export type DecodedJobStatus =
  | { ok: true; status: JobStatusShape }
  | { ok: false; problems: JobStatusShapeProblem[] };

function formatPath(root: string, path: readonly PropertyKey[]): string {
  let text = root;
  for (const segment of path) {
    text += typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`;
  }
  return text;
}

function valueAtPath(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'an object';
  if (typeof value === 'bigint') return `${value}n`;
  return JSON.stringify(value) ?? String(value);
}

function decodeWith(
  schema: ReturnType<typeof buildJobStatusSchema>,
  value: unknown,
  root: string,
): DecodedJobStatus {
  // An absent status (null in JSON) is the empty status, as the API server decodes it.
  const input = value ?? {};
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, status: result.data };
  const problems = result.error.issues.map((issue) => {
    const field = formatPath(root, issue.path);
    return {
      field,
      message: `${field}: ${issue.message}, got ${describeValue(valueAtPath(input, issue.path))}`,
    };
  });
  return { ok: false, problems };
}

/**
 * Checks that a value has the shape of a batch/v1 JobStatus with non-negative counters, with
 * one message per problem naming the field, the expectation and the value found.
 */
export function parseJobStatus(value: unknown): ParsedJobStatus {
  const decoded = decodeWith(jobStatusSchema, value, 'status');
  return decoded.ok ? decoded : { ok: false, problems: decoded.problems.map((problem) => problem.message) };
}

/**
 * Like parseJobStatus, but accepts negative counters: the shape the API server can decode before
 * its validation rules run. `root` names the status in fields and messages (e.g. 'oldStatus').
 */
export function decodeJobStatus(value: unknown, root = 'status'): DecodedJobStatus {
  return decodeWith(decodableJobStatusSchema, value, root);
}
