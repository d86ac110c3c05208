import { UsageError } from './prompts.js';
import { rememberSecret } from './secrets-read.js';

/**
 * All of standard input, as UTF-8 text, read as a stream. Never `fs.readFileSync(0)`: every command looks at
 * `process.stdin.isTTY` first (cli/terminal.ts), which opens a pipe on stdin in non-blocking mode, so a
 * synchronous read fails with EAGAIN whenever the writer has not written yet (`jq … | svc api … --input -`
 * failed now and then, by how fast jq was).
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a secret piped on stdin (`--password-stdin`, `--api-key-stdin`): one line, trailing newline dropped. */
export async function readSecretFromStdin(flag: string): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError(`${flag} reads from standard input, but it is a terminal: pipe the value in`, flag);
  const value = (await readStdin()).replace(/\r?\n$/, '');
  if (!value) throw new UsageError(`${flag}: nothing was read from standard input`, flag);
  return rememberSecret(value);
}

/** Reads `names.length` secrets piped on stdin, one per line (`--passwords-stdin`: two secrets cannot share one
 * stdin any other way). Extra trailing lines are an error, so a wrong pipe is not silently half-used. */
export async function readSecretLinesFromStdin(flag: string, names: readonly string[]): Promise<string[]> {
  const text = await readSecretFromStdin(flag);
  const lines = text.split(/\r?\n/);
  if (lines.length !== names.length || lines.some((line) => line === '')) {
    throw new UsageError(`${flag} expects ${names.length} lines on standard input (${names.join(', then ')}), got ${lines.length}`, flag);
  }
  return lines.map(rememberSecret);
}
