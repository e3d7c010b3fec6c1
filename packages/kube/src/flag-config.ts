import { parseArgs } from 'node:util';
import type { z } from 'zod';

/** A bad flag or value: the process prints it with its usage and exits 2. */
export class ConfigError extends Error {}

export interface FlagConfigOptions<Field extends string> {
  /** `--flag-name` → schema field; `JOBRELAY_FLAG_NAME` sets it too. */
  flags: Readonly<Record<string, Field>>;
  /** Fields given as true|false|1|0; anything else is an error, not a silent false. */
  booleanFields?: ReadonlySet<Field>;
  /** Fields given as comma-separated lists. */
  listFields?: ReadonlySet<Field>;
}

/**
 * Configuration of a jobrelay process: flags win over JOBRELAY_* variables, which win over the
 * schema's defaults. Every problem names its flag; unknown flags and stray arguments are
 * errors too. Shared by the controller and the API, so both read their flags the same way.
 */
export function loadFlagConfig<Schema extends z.ZodType, Field extends string>(
  argv: string[],
  env: NodeJS.ProcessEnv,
  schema: Schema,
  options: FlagConfigOptions<Field>,
): z.infer<Schema> {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.keys(options.flags).map((flag) => [flag, { type: 'string' as const }]),
      ),
      strict: true,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new ConfigError(`invalid arguments: ${err instanceof Error ? err.message : String(err)}`);
  }
  const raw: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(options.flags) as Array<[string, Field]>) {
    const value = values[flag] ?? env[`JOBRELAY_${flag.toUpperCase().replaceAll('-', '_')}`];
    if (value === undefined || value === '') continue;
    if (options.listFields?.has(field))
      raw[field] = value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    else if (options.booleanFields?.has(field))
      raw[field] = ['true', '1'].includes(value) ? true : ['false', '0'].includes(value) ? false : value;
    else raw[field] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const fieldToFlag = new Map(
      Object.entries(options.flags).map(([flag, field]) => [field as string, flag]),
    );
    const problems = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0]);
      return `--${fieldToFlag.get(field) ?? field}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}
