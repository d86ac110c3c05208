import { readFlagFile } from './files.js';
import { Flags } from './flags.js';
import { UsageError } from './prompts.js';
import type { FieldFlags } from './schema-flags.js';
import { readSecretFromStdin } from './stdin.js';

/** What every `svc integrations …` command takes: the organization (partner and system callers). */
export const orgFlag = {
  'org-id': Flags.string({ summary: 'Organization id (partner and system callers; organization callers use their own).' }),
};

/** The whole configuration from a JSON or YAML file (secrets may be in it: files, never argv). */
export const configFileFlag = {
  'from-file': Flags.string({ summary: 'JSON or YAML file with the whole configuration (may hold its secrets); flags override its fields.' }),
};

/** `--<name>-stdin` and `--<name>-file` for one secret field (CLI.md: secrets never come from argv). */
export function secretFieldFlags<const N extends string>(name: N, what: string) {
  return {
    [`${name}-stdin`]: Flags.boolean({ summary: `Read the ${what} from standard input (one line).`, exclusive: [`${name}-file`] }),
    [`${name}-file`]: Flags.string({ summary: `Read the ${what} from this file (first line).`, helpValue: '<path>', exclusive: [`${name}-stdin`] }),
  } as Record<`${N}-stdin` | `${N}-file`, ReturnType<typeof Flags.string>>;
}

/** The secret given by `--<name>-stdin` or `--<name>-file`; undefined when neither was. */
export async function secretField(flags: Record<string, unknown>, name: string): Promise<string | undefined> {
  if (flags[`${name}-stdin`] === true) return readSecretFromStdin(`--${name}-stdin`);
  const file = flags[`${name}-file`];
  if (typeof file !== 'string') return undefined;
  const value = (await readFlagFile(file, `--${name}-file`)).split(/\r?\n/)[0] ?? '';
  if (!value) throw new UsageError(`--${name}-file ${file} is empty`, `--${name}-file`);
  return value;
}

/** No field flags: `bodyFrom(NO_FIELDS)` is the --from-file object alone (or {}). */
export const NO_FIELDS: FieldFlags<Record<string, unknown>> = { flags: {}, fields: [] };

/** The values that were given (flags not given are left out, so they do not override --from-file). */
export const given = (values: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));

/** The query of every integrations call. */
export const orgQuery = (flags: { 'org-id'?: string | undefined }) => (flags['org-id'] ? { orgId: flags['org-id'] } : {});
