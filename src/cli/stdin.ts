import { UsageError } from './prompts.js';

/** Reads a secret piped on stdin (`--password-stdin`, `--api-key-stdin`): one line, trailing newline dropped. */
export async function readSecretFromStdin(flag: string): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError(`${flag} reads from standard input, but it is a terminal: pipe the value in`, flag);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const value = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (!value) throw new UsageError(`${flag}: nothing was read from standard input`, flag);
  return value;
}
