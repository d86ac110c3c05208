import { readFlagFile } from './files.js';
import { Flags } from './flags.js';
import { UsageError } from './prompts.js';
import { rememberSecret } from './secrets-read.js';
import { readSecretFromStdin } from './stdin.js';

/** `--<name>-stdin` and `--<name>-file` for one secret field (CLI.md: secrets never come from argv). */
export function secretFieldFlags<const N extends string>(name: N, what: string) {
  const stdin = Flags.boolean({ summary: `Read the ${what} from standard input (one line).`, exclusive: [`${name}-file`] });
  const file = Flags.string({ summary: `Read the ${what} from this file (first line).`, helpValue: '<path>', exclusive: [`${name}-stdin`] });
  return { [`${name}-stdin`]: stdin, [`${name}-file`]: file } as Record<`${N}-stdin`, typeof stdin> & Record<`${N}-file`, typeof file>;
}

/** The secret given by `--<name>-stdin` or `--<name>-file`; undefined when neither was. */
export async function secretField(flags: Record<string, unknown>, name: string): Promise<string | undefined> {
  if (flags[`${name}-stdin`] === true) return readSecretFromStdin(`--${name}-stdin`);
  const file = flags[`${name}-file`];
  if (typeof file !== 'string') return undefined;
  const value = (await readFlagFile(file, `--${name}-file`)).split(/\r?\n/)[0] ?? '';
  if (!value) throw new UsageError(`--${name}-file ${file} is empty`, `--${name}-file`);
  return rememberSecret(value);
}
