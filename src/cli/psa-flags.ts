import { readFlagFile } from './files.js';
import { Flags } from './flags.js';
import { UsageError } from './prompts.js';
import { rememberSecret } from './secrets-read.js';
import { readSecretFromStdin } from './stdin.js';

/** Where `svc psa connections create|update` reads the credentials object: never argv (CLI.md "Secrets"). */
export const credentialsFlags = {
  'credentials-stdin': Flags.boolean({ summary: 'Read the credentials (a JSON object) from standard input.', exclusive: ['credentials-file'] }),
  'credentials-file': Flags.string({ summary: 'Read the credentials (a JSON object) from this file.', helpValue: '<path>', exclusive: ['credentials-stdin'] }),
};

/** The credentials given by --credentials-stdin or --credentials-file; undefined when neither was given. */
export async function credentialsFrom(flags: { 'credentials-stdin'?: boolean; 'credentials-file'?: string | undefined }): Promise<Record<string, unknown> | undefined> {
  let text: string;
  let flag: string;
  if (flags['credentials-stdin']) {
    flag = '--credentials-stdin';
    text = await readSecretFromStdin(flag);
  } else if (flags['credentials-file'] !== undefined) {
    flag = '--credentials-file';
    text = await readFlagFile(flags['credentials-file'], flag);
  } else return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${flag}: the credentials are not valid JSON`, flag);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${flag}: the credentials must be a JSON object`, flag);
  return rememberSecret(value as Record<string, unknown>);
}
