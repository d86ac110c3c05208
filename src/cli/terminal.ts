/** Terminal capabilities, decided once from the environment and the standard streams (CLI.md "Scripting conveniences"). */
export interface TerminalInfo {
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** CI mode: never prompt, never spin, never colour. */
  ci: boolean;
  color: boolean;
}

interface MaybeTTY {
  isTTY?: boolean;
}

export interface StandardStreams {
  stdin: MaybeTTY;
  stdout: MaybeTTY;
  stderr: MaybeTTY;
}

type Env = Record<string, string | undefined>;

/** `CI` set to anything but empty, "false" or "0". */
export function isCiSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

export function detectTerminal(env: Env = process.env, streams: StandardStreams = process): TerminalInfo {
  const stdinIsTTY = streams.stdin.isTTY === true;
  const stdoutIsTTY = streams.stdout.isTTY === true;
  const stderrIsTTY = streams.stderr.isTTY === true;
  const ci = isCiSet(env.CI) || !stdinIsTTY || !stdoutIsTTY;
  // no-color.org asks for "any value"; TERM=dumb terminals cannot render escapes either.
  const color = !ci && (stdoutIsTTY || stderrIsTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  return { stdinIsTTY, stdoutIsTTY, stderrIsTTY, ci, color };
}

/** A prompt needs a keyboard (stdin) and a screen that is not the data stream (stderr). */
export function canPrompt(terminal: TerminalInfo): boolean {
  return terminal.stdinIsTTY && terminal.stderrIsTTY && !terminal.ci;
}

export interface LineSink {
  write(chunk: string): unknown;
}

const warned = new Set<string>();

/** Writes `message` as one line to stderr the first time `key` is seen in this process; later calls are ignored. */
export function warnOnce(key: string, message: string, sink: LineSink = process.stderr): void {
  if (warned.has(key)) return;
  warned.add(key);
  sink.write(message.endsWith('\n') ? message : `${message}\n`);
}
