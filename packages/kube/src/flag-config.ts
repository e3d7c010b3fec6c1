import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
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

/** The flag (and JOBRELAY_CONFIG) that names a configuration file. */
export const configFileFlag = 'config';

/**
 * Configuration of a jobrelay process: flags win over JOBRELAY_* variables, which win over the
 * file given by `--config` (YAML or JSON, keyed by the schema's field names, e.g. `redisUrl`,
 * with real lists, booleans and numbers), which wins over the schema's defaults. Every problem
 * names where the value came from (the flag, the variable or the file's key); unknown flags,
 * unknown keys in the file and stray arguments are errors too. Shared by the controller and
 * the API, so both read their configuration the same way.
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
        [...Object.keys(options.flags), configFileFlag].map((flag) => [flag, { type: 'string' as const }]),
      ),
      strict: true,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new ConfigError(`invalid arguments: ${err instanceof Error ? err.message : String(err)}`);
  }
  const fields = new Set<string>(Object.values(options.flags));
  const file = values[configFileFlag] ?? (env.JOBRELAY_CONFIG || undefined);
  const raw: Record<string, unknown> = file === undefined ? {} : readConfigFile(file, fields);
  /** Where each field's value came from, for error messages: [what to name, where it was set]. */
  const source = new Map<string, [string, string]>(
    Object.keys(raw).map((field) => [field, [field, `in ${file}`]]),
  );
  for (const [flag, field] of Object.entries(options.flags) as Array<[string, Field]>) {
    const variable = `JOBRELAY_${flag.toUpperCase().replaceAll('-', '_')}`;
    const fromFlag = values[flag];
    const value = fromFlag ?? env[variable];
    if (value === undefined || value === '') continue;
    source.set(field, [`--${flag}`, fromFlag === undefined ? `from ${variable}` : '']);
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
      const field = String(issue.path[0] ?? '');
      const [name, where] = source.get(field) ?? [
        fieldToFlag.has(field) ? `--${fieldToFlag.get(field)}` : field,
        '',
      ];
      return `${name || 'configuration'}: ${issue.message}${where ? ` (${where})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

function readConfigFile(file: string, fields: ReadonlySet<string>): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `--${configFileFlag} ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  let document: unknown;
  try {
    // YAML 1.2 reads JSON too.
    document = parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `--${configFileFlag} ${file}: not YAML or JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== 'object' || Array.isArray(document))
    throw new ConfigError(
      `--${configFileFlag} ${file}: must be a mapping of settings, e.g. "redisUrl: redis://redis:6379"`,
    );
  const unknown = Object.keys(document).filter((key) => !fields.has(key));
  if (unknown.length > 0)
    throw new ConfigError(
      `--${configFileFlag} ${file}: unknown ${unknown.length === 1 ? 'setting' : 'settings'} ${unknown.map((k) => JSON.stringify(k)).join(', ')}; ` +
        `known: ${[...fields].sort().join(', ')}`,
    );
  // Plain values: the schema coerces numbers given as strings, and checks everything else.
  return { ...(document as Record<string, unknown>) };
}
