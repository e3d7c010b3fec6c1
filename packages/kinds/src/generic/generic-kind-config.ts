// The configuration of a kind dispatched by the generic adapter (like MultiKueue's external
// frameworks): where it lives, which managedBy value it claims, when it is finished or
// suspended, where its pod templates are, and which spec fields flow down to a mirror.
// Given to the controller as JSON or YAML (one object or a list), parsed here with errors
// that name the field.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { managedByValue } from '../managed-by-value.ts';

const fieldPath = z
  .string()
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dot-separated field path such as spec.suspend');

const lowerName = z
  .string()
  .regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/, 'must be lower-case letters, digits and dashes');

const finishedCondition = z
  .object({
    /** A status.conditions[] type, e.g. Complete. */
    type: z.string().min(1, 'must not be empty'),
    /** The status that means finished; default "True". */
    status: z.enum(['True', 'False', 'Unknown']).default('True'),
  })
  .strict();

const finishedField = z
  .object({
    /** A field of the object, e.g. status.phase. */
    path: fieldPath,
    /** Values of it that mean finished, e.g. [Succeeded, Failed]. */
    values: z.array(z.string()).min(1, 'must list at least one value'),
  })
  .strict();

/** A label key: an optional DNS-subdomain prefix and a name of at most 63 characters. */
const labelKey = z
  .string()
  .max(317)
  .regex(
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    'must be a label key such as jobset.sigs.k8s.io/jobset-name',
  );

const podCount = z
  .object({
    /** An integer field, relative to the pod set's element (or the object). */
    path: fieldPath,
    /** Its value when the field is absent (the CRD's default). */
    default: z.number().int().min(0),
  })
  .strict();

const podSet = z
  .object({
    /** An array field; each element is one pod set, and the paths below are relative to it. Omit for a single pod set. */
    each: fieldPath.optional(),
    /** The PodTemplateSpec, relative to the element (or the object). */
    template: fieldPath,
    /** Integer fields whose product is the number of such pods running at once; none means one pod. */
    count: z.array(podCount).default([]),
  })
  .strict();

export const genericKindConfigSchema = z
  .object({
    /** Short, stable, lower-case: used in flags, metrics, logs and the REST API. */
    name: lowerName,
    group: z
      .string()
      .regex(
        /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/,
        'must be an API group such as jobset.x-k8s.io',
      ),
    version: z
      .string()
      .regex(/^v[0-9]+((alpha|beta)[0-9]+)?$/, 'must be an API version such as v1 or v1alpha2'),
    kind: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'must be a Kind such as JobSet'),
    plural: lowerName,
    managedBy: z
      .object({
        /** The value claimed unless the configuration names another. */
        default: managedByValue,
        /** The only values the kind's CRD accepts, when it restricts them. */
        accepted: z.array(managedByValue).min(1, 'must list at least one value').optional(),
      })
      .strict()
      .refine((m) => !m.accepted || m.accepted.includes(m.default), {
        message: 'default must be one of accepted',
        path: ['default'],
      }),
    /** Finished when any of these conditions is present with its status. */
    finishedConditions: z.array(finishedCondition).default([]),
    /** Finished when any of these fields has one of its values (kinds with a phase instead of conditions). */
    finishedFields: z.array(finishedField).default([]),
    /** A boolean field that suspends the workload, e.g. spec.suspend; none when the kind cannot be suspended. */
    suspendField: fieldPath.optional(),
    /** Where the pod templates are, for placement; none means no demand (fits anywhere). */
    podSets: z.array(podSet).default([]),
    /** Spec fields (relative to spec) that flow down to a running mirror; default: the suspend field. */
    mutableSpecFields: z.array(fieldPath).optional(),
    /**
     * A label the kind's controller puts on every pod of the workload, with the workload's name
     * as its value (JobSet: jobset.sigs.k8s.io/jobset-name): how the admin API finds its pods
     * for logs. None: the API cannot show its pods' logs.
     */
    podLabel: labelKey.optional(),
  })
  .strict()
  .refine((c) => !c.suspendField || c.suspendField.startsWith('spec.'), {
    message: 'must be a field under spec (the mirror must be suspended through it too)',
    path: ['suspendField'],
  });

/** A validated configuration (defaults applied). */
export type GenericKindConfig = z.output<typeof genericKindConfigSchema>;
/** What a configuration may say (defaults not yet applied): the form written by hand. */
export type GenericKindConfigInput = z.input<typeof genericKindConfigSchema>;

export type GenericKindConfigResult =
  | { ok: true; configs: GenericKindConfig[] }
  | { ok: false; problem: string };

function issuePath(prefix: string, path: readonly PropertyKey[]): string {
  let text = prefix;
  for (const segment of path)
    text += typeof segment === 'number' ? `[${segment}]` : `${text ? '.' : ''}${String(segment)}`;
  return text || '(top level)';
}

/** One line per problem, each naming the field: `kinds[1].managedBy.default: must be ...`. */
function describeIssues(error: z.ZodError, prefix: string, skip = 0): string {
  return error.issues
    .map((issue) => {
      const message =
        issue.code === 'unrecognized_keys'
          ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`
          : issue.message;
      return `${issuePath(prefix, issue.path.slice(skip))}: ${message}`;
    })
    .join('; ');
}

/** A missing field says so, rather than "expected string, received undefined". */
const parseOptions = {
  error: (issue: { code?: string; input?: unknown }) =>
    issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined,
};

/** Validates one configuration object. */
export function genericKindConfig(input: unknown): GenericKindConfigResult {
  const parsed = genericKindConfigSchema.safeParse(input, parseOptions);
  return parsed.success
    ? { ok: true, configs: [parsed.data] }
    : { ok: false, problem: describeIssues(parsed.error, '') };
}

/**
 * Parses the text of a controller flag: JSON or YAML, one configuration or a list of them.
 * Names must be unique. A problem names the field (`kinds[0].plural: ...`); nothing is
 * half-accepted.
 */
export function parseGenericKindConfigs(text: string): GenericKindConfigResult {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    return { ok: false, problem: `not valid JSON or YAML: ${(err as Error).message.split('\n')[0]}` };
  }
  if (document === null || document === undefined)
    return { ok: false, problem: 'no kind configuration given' };
  const isList = Array.isArray(document);
  const prefix = isList ? 'kinds' : '';
  const parsed = z.array(genericKindConfigSchema).safeParse(isList ? document : [document], parseOptions);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error, prefix, isList ? 0 : 1) };
  const seen = new Set<string>();
  for (const [i, config] of parsed.data.entries()) {
    if (seen.has(config.name)) {
      const field = issuePath(prefix, isList ? [i, 'name'] : ['name']);
      return { ok: false, problem: `${field}: duplicate name ${JSON.stringify(config.name)}` };
    }
    seen.add(config.name);
  }
  return { ok: true, configs: parsed.data };
}
