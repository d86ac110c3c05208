import { Flags } from './flags.js';
import type { FieldFlags } from './schema-flags.js';

/** What every `svc integrations …` command takes: the organization (partner and system callers). */
export const orgFlag = {
  'org-id': Flags.string({ summary: 'Organization id (partner and system callers; organization callers use their own).' }),
};

/** The whole configuration from a JSON or YAML file (secrets may be in it: files, never argv). */
export const configFileFlag = {
  'from-file': Flags.string({ summary: 'JSON or YAML file with the whole configuration (may hold its secrets); flags override its fields.' }),
};

/** No field flags: `bodyFrom(NO_FIELDS)` is the --from-file object alone (or {}). */
export const NO_FIELDS: FieldFlags<Record<string, unknown>> = { flags: {}, fields: [] };

/** The values that were given (flags not given are left out, so they do not override --from-file). */
export const given = (values: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));

/** The query of every integrations call. */
export const orgQuery = (flags: { 'org-id'?: string | undefined }) => (flags['org-id'] ? { orgId: flags['org-id'] } : {});
