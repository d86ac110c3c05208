import { readFlagFile } from './files.js';
import { Flags } from './flags.js';
import { UsageError } from './prompts.js';
import { readSecretFromStdin } from './stdin.js';

/** Where `svc webhooks …` reads a signing secret: never argv (CLI.md "Secrets"). */
export const secretFlags = {
  'secret-stdin': Flags.boolean({ summary: 'Read the signing secret from standard input (one line).', exclusive: ['secret-file'] }),
  'secret-file': Flags.string({ summary: 'Read the signing secret from this file (first line).', helpValue: '<path>', exclusive: ['secret-stdin'] }),
};

/** The secret given by --secret-stdin or --secret-file; undefined when neither was given. */
export async function secretFrom(flags: { 'secret-stdin'?: boolean; 'secret-file'?: string | undefined }): Promise<string | undefined> {
  if (flags['secret-stdin']) return readSecretFromStdin('--secret-stdin');
  const file = flags['secret-file'];
  if (file === undefined) return undefined;
  const value = (await readFlagFile(file, '--secret-file')).split(/\r?\n/)[0] ?? '';
  if (!value) throw new UsageError(`--secret-file ${file} is empty`, '--secret-file');
  return value;
}

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
