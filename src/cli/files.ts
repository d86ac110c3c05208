import fs from 'node:fs';
import { UsageError } from './prompts.js';
import { readStdin } from './stdin.js';

/** The text of a file named by a flag (`-` for standard input, read as a stream: see readStdin); an unreadable
 * file is a usage error (exit 2). */
export async function readFlagFile(file: string, flag: string): Promise<string> {
  if (file === '-') {
    if (process.stdin.isTTY) throw new UsageError(`${flag} - reads standard input, but it is a terminal: pipe the data in`, flag);
    return readStdin();
  }
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read ${flag} ${file}: ${(err as Error).message}`, flag);
  }
}

/** A JSON or YAML file (JSON is YAML), parsed; a file that does not parse is a usage error that names the line
 * and column but never quotes the file (it may hold a secret). */
export async function readDataFile(file: string, flag: string): Promise<unknown> {
  const text = await readFlagFile(file, flag);
  const { parse } = await import('yaml');
  try {
    return parse(text) as unknown;
  } catch (err) {
    // yaml's message is `<what> at line L, column C:` and then a frame quoting the line: keep the first line only.
    const first = (err as Error).message.split('\n')[0]?.replace(/:$/, '') ?? '';
    throw new UsageError(`${flag} ${file} is not JSON or YAML: ${first}`, flag);
  }
}
