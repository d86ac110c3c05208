import type { EndpointDef } from '../contract/endpoint.js';
import type { ClientEndpoint } from '../contract/projection.js';
import type { CallResult } from '../client/contract-client.js';
import { ApiCommand, mutationFlags } from './api-command.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery } from './integration-flags.js';
import { secretField, secretFieldFlags } from './secret-flags.js';
import { asIs, requestOf, withText, type CommandText } from './resource-commands.js';

/**
 * The shapes of `svc integrations <kind> …`: each command names its endpoint and texts (and, to save settings,
 * its fields); flags, help and output are those of the hand-written commands these replace.
 */

type Picked<E extends EndpointDef, R> = { pick?: (answer: CallResult<E>) => R };

/** `get` and `test`: one call on the organization's settings; a call that is not a GET (a test) sends an empty
 * body and takes --dry-run. */
export function orgSettingsCommand<E extends EndpointDef, R = CallResult<E>>(def: ClientEndpoint<E>, text: CommandText & Picked<E, R>) {
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  const reads = def.method === 'GET';
  const flags = reads ? { ...orgFlag } : { ...orgFlag, ...mutationFlags };
  class OrgSettingsCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      return pick(await this.call(def, requestOf<E>({ query: orgQuery(this.flags), ...(reads ? {} : { body: {} }) })));
    }
  }
  return withText(OrgSettingsCommand, text);
}

/** A secret field of the settings: `--<name>-stdin` or `--<name>-file`, never argv (CLI.md). */
export const secretInput = (what: string) => ({ secretOf: what });

/** A flag whose body field is not its name in camelCase: where that name is taken by a global flag (`--base-url`). */
export const bodyField = <F extends { type: string }>(field: string, flag: F) => ({ field, flag });

/** A field of the settings: a flag, a flag named apart from its field, or a secret read by its
 * `--<name>-stdin`/`--<name>-file` flags. */
type SettingsField = { secretOf: string } | { type: string } | { field: string; flag: { type: string } };

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const flagOf = (field: SettingsField) => ('flag' in field ? field.flag : field);
const fieldName = (name: string, field: SettingsField) => ('field' in field ? field.field : camel(name));

/** `update` and `create`: the settings from --from-file with the field flags given laid over them (each body
 * field is its flag's name in camelCase unless named with bodyField), sent for the organization. */
export function orgSettingsSaveCommand<E extends EndpointDef, R = CallResult<E>>(
  def: ClientEndpoint<E>,
  fields: Readonly<Record<string, SettingsField>>,
  text: CommandText & Picked<E, R>,
) {
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  const fieldFlags = Object.entries(fields).flatMap(([name, field]) =>
    'secretOf' in field ? Object.entries(secretFieldFlags(name, field.secretOf)) : [[name, flagOf(field)]],
  );
  const flags = { ...orgFlag, ...(Object.fromEntries(fieldFlags) as Record<string, never>), ...configFileFlag, ...mutationFlags };
  class OrgSettingsSaveCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      const flags = this.flags as Record<string, unknown>;
      const base = await this.bodyFrom(NO_FIELDS);
      const values: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(fields))
        values[fieldName(name, field)] = 'secretOf' in field ? await secretField(flags, name) : flags[name];
      const body = { ...base, ...given(values) };
      return pick(await this.call(def, requestOf<E>({ query: orgQuery(this.flags), body })));
    }
  }
  return withText(OrgSettingsSaveCommand, text);
}
