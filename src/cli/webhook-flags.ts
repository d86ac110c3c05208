import { Flags } from './flags.js';
import { UsageError } from './prompts.js';
import { secretField, secretFieldFlags } from './secret-flags.js';

/** Where `svc webhooks …` reads a signing secret: never argv (CLI.md "Secrets"). */
export const secretFlags = secretFieldFlags('secret', 'signing secret');

/** The secret given by --secret-stdin or --secret-file; undefined when neither was given. */
export const secretFrom = (flags: Record<string, unknown>): Promise<string | undefined> => secretField(flags, 'secret');

export const headerFlag = {
  header: Flags.string({ summary: 'A custom header sent with every delivery, as "Name: value". Repeat the flag.', multiple: true, helpValue: '<name: value>' }),
};

/** `--header "Name: value"` flags as the API's [{key, value}]. */
export function headersFrom(values: readonly string[] | undefined): Array<{ key: string; value: string }> | undefined {
  return values?.map((entry) => {
    const at = entry.indexOf(':');
    if (at <= 0) throw new UsageError(`--header "${entry}" must be "Name: value"`, '--header');
    return { key: entry.slice(0, at).trim(), value: entry.slice(at + 1).trim() };
  });
}
