import type { Interfaces } from '@oclif/core';
import { ApiError, NetworkError, UnexpectedResponseError, errorCode, headerValue, unknownRoutePath } from '../client/errors.js';
import { retryAfterMs, type RetryInfo } from '../client/http.js';
import { ExitCode, exitCodeForStatus, hintFor, type HintContext } from './exit-codes.js';
import { Flags } from './flags.js';
import { OUTPUT_FORMATS, createRowWriter, render, type OutputFormat, type RenderOptions, type RowWriter } from './output.js';
import { UsageError } from './prompts.js';
import { parseArgv, type ArgDef, type FlagDef } from './runtime/parse.js';
import { detectTerminal, type TerminalInfo } from './terminal.js';

/** What a command class declares: the statics the runner parses with and oclif reads for help and the manifest. */
export interface CommandClass {
  id?: string;
  flags?: Interfaces.FlagInput;
  baseFlags?: Interfaces.FlagInput;
  args?: Interfaces.ArgInput;
  strict?: boolean;
}

export type BaseFlags<T extends CommandClass> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;
export type BaseArgs<T extends CommandClass> = Interfaces.InferredArgs<T['args']>;

/** The one place a command ends with an exit code: thrown by `exit()`, turned into process.exitCode by `run`. */
export class ExitError extends Error {
  constructor(readonly exitCode: number) {
    super(`EEXIT: ${exitCode}`);
  }
}

/** What svc's runner and oclif both hand a command: the CLI's name and version. */
export interface CommandConfig {
  bin: string;
  version: string;
}

/** A failure the command found itself, with the exit code of CLI.md's table. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly code?: string,
    readonly hint?: string,
    /** The HTTP status behind it, when an answer of the server is (for the JSON error on stderr). */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Ctrl-C (SIGINT): what work in flight is aborted with; exit 130 (CLI.md "Errors and exit codes"). */
export class InterruptedError extends CommandError {
  constructor(message = 'Interrupted', hint?: string) {
    super(message, ExitCode.INTERRUPTED, 'INTERRUPTED', hint);
  }
}

/** The flags that shape stdout. A command offers (and accepts) only those it honours: see `honouring`. */
const OUTPUT_FLAGS = {
  output: Flags.string({
    char: 'o',
    summary: 'Output format: table (on a terminal), json (otherwise), jsonl, csv or yaml.',
    options: [...OUTPUT_FORMATS],
    helpGroup: 'OUTPUT',
  }),
  columns: Flags.string({ summary: 'Fields to show, comma-separated (dot paths allowed).', helpGroup: 'OUTPUT' }),
  'no-headers': Flags.boolean({ summary: 'Omit the header row of table and csv output.', helpGroup: 'OUTPUT' }),
  quiet: Flags.boolean({ char: 'q', summary: 'Print ids only (or the secret, for commands that reveal one).', helpGroup: 'OUTPUT' }),
};

export type OutputFlag = keyof typeof OUTPUT_FLAGS;

/**
 * A family's base flags keeping only the output flags a command honours, e.g.
 * `static override baseFlags = honouring(ServerCommand.baseFlags, [])` for a command that prints no data: the
 * others are neither offered in help nor accepted (the parser refuses them as nonexistent, exit 2).
 */
export function honouring<F extends Interfaces.FlagInput>(baseFlags: F, outputs: readonly OutputFlag[]): F {
  return Object.fromEntries(Object.entries(baseFlags).filter(([name]) => !(name in OUTPUT_FLAGS) || outputs.includes(name as OutputFlag))) as F;
}

const isClosedPipe = (err: unknown) => {
  const code = errorCode(err);
  return code === 'EPIPE' || (code === 'ERR_STREAM_DESTROYED' && process.stdout.destroyed);
};

let processGuarded = false;

/**
 * What every command does with its process, once: a closed stdout (`svc … | head -1`) ends the command quietly
 * with exit 0, as gh and git do; Ctrl-C ends it with exit 130 and no message. While a command runs, its first
 * Ctrl-C aborts the work in flight instead (`interrupt`, which lets an export clean up); this listener then
 * steps aside, and ends the process at once on a second Ctrl-C.
 */
function guardProcess(): void {
  if (processGuarded) return;
  processGuarded = true;
  process.stdout.on('error', (err) => {
    if (isClosedPipe(err)) process.exit(ExitCode.SUCCESS);
    throw err;
  });
  process.on('SIGINT', () => {
    if (process.listenerCount('SIGINT') === 1) process.exit(ExitCode.INTERRUPTED);
  });
}

/** An inquirer prompt closed with Ctrl-C. */
const isPromptInterrupted = (err: Error) => err.name === 'ExitPromptError';

/** `3475` → `58 min`, `45` → `45 s`. */
function duration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.ceil(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * The shape every command shares: global flags, output rendering of what `run()` returns, and one error
 * path with the exit codes of CLI.md. Commands never render or print errors themselves.
 */
export abstract class BaseCommand<T extends CommandClass> {
  static id: string | undefined;
  static summary: string | undefined;
  static description: string | undefined;
  static examples: string[] | undefined;
  static usage: string | string[] | undefined;
  static aliases: string[] = [];
  static hidden: boolean | undefined;
  static strict = true;
  static flags: Interfaces.FlagInput = {};
  static args: Interfaces.ArgInput = {};
  static baseFlags = {
    ...OUTPUT_FLAGS,
    'no-color': Flags.boolean({ summary: 'Never colour output (NO_COLOR is honoured too).', helpGroup: 'OUTPUT' }),
    debug: Flags.boolean({ summary: 'Print stack traces and request details on failure.', helpGroup: 'GLOBAL' }),
  };

  /** Default columns for table and csv output. */
  static columns: string[] | undefined;
  /** The field `-q` prints; defaults to `id`. */
  static quietField: string | undefined;
  /** A secret in the result shown once: `-q` prints only it, and a warning goes to stderr. */
  static secretField: string | undefined;
  /** The stderr warning printed with a secret shown once (default: one naming `secretField`). */
  static secretNotice: string | undefined;
  /** The format when `-o` is not given (default: table on a terminal, json otherwise). */
  static defaultOutput: OutputFormat | undefined;

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;
  /** Positional arguments beyond the declared ones (commands with `strict = false`), flags already taken out. */
  protected extraArgs: string[] = [];
  protected terminal!: TerminalInfo;
  /** Aborted by the first Ctrl-C: requests and exports in flight stop, clean up, and the command exits 130. A
   * second Ctrl-C ends the process at once. */
  protected readonly interrupt = new AbortController();

  constructor(
    readonly argv: string[],
    readonly config: CommandConfig,
  ) {}

  /**
   * Runs the command to its exit code, which it sets on process.exitCode; the process then ends when its
   * output is written. oclif calls this too (`Command.run(argv, config)`), so either runner gives one result.
   */
  static async run(this: new (argv: string[], config: CommandConfig) => BaseCommand<CommandClass>, argv: string[], config: CommandConfig): Promise<void> {
    guardProcess();
    const command = new this(argv, config);
    process.exitCode = await command.execute();
  }

  protected get ctor(): typeof BaseCommand {
    return this.constructor as typeof BaseCommand;
  }

  /** The command's work: what it returns is rendered; `undefined` means it printed (or streamed) already. */
  abstract run(): Promise<unknown>;

  private async execute(): Promise<number> {
    const onInterrupt = () => this.interrupt.abort(new InterruptedError());
    process.once('SIGINT', onInterrupt);
    try {
      await this.init();
      const result = await this.run();
      if (result !== undefined) this.print(result);
      for (const line of this.trailer) this.info(line);
      return 0;
    } catch (err) {
      if (isClosedPipe(err)) return ExitCode.SUCCESS;
      try {
        // Whatever the abort broke on its way out (a stream, a socket) is the interrupt.
        await this.catch(this.interrupt.signal.aborted && !(err instanceof CommandError || err instanceof ExitError) ? new InterruptedError() : (err as Error));
      } catch (exit) {
        if (exit instanceof ExitError) return exit.exitCode;
        throw exit;
      }
      return ExitCode.UNEXPECTED;
    } finally {
      process.off('SIGINT', onInterrupt);
    }
  }

  protected async init(): Promise<void> {
    this.terminal = detectTerminal();
    const ctor = this.ctor;
    const { flags, args, argv } = await parseArgv(this.argv, {
      flags: { ...ctor.baseFlags, ...ctor.flags } as Record<string, FlagDef>,
      args: ctor.args as Record<string, ArgDef>,
      strict: ctor.strict,
    });
    this.flags = flags as BaseFlags<T>;
    this.args = args as BaseArgs<T>;
    this.extraArgs = argv;
    if (this.flags['no-color']) this.terminal = { ...this.terminal, color: false };
  }

  /** Ends the command with an exit code (CLI.md "Exit codes"). */
  protected exit(code: number): never {
    throw new ExitError(code);
  }

  protected get format(): OutputFormat {
    const ctor = this.ctor;
    return (this.flags.output as OutputFormat | undefined) ?? ctor.defaultOutput ?? (this.terminal.stdoutIsTTY ? 'table' : 'json');
  }

  protected renderOptions(): RenderOptions {
    const ctor = this.ctor;
    // Default columns shape tables and csv; json, jsonl and yaml print the API's objects as they are unless
    // --columns asks for fields (CLI.md "Output").
    const tabular = this.format === 'table' || this.format === 'csv';
    const columns = this.flags.columns?.split(',').map((c) => c.trim()).filter(Boolean) ?? (tabular ? ctor.columns : undefined);
    return {
      format: this.format,
      ...(columns ? { columns } : {}),
      userColumns: this.flags.columns !== undefined,
      noHeaders: this.flags['no-headers'],
      quiet: this.flags.quiet,
      quietField: ctor.secretField ?? ctor.quietField ?? 'id',
      color: this.terminal.color,
    };
  }

  protected print(result: unknown): void {
    const ctor = this.ctor;
    const notice = ctor.secretNotice ?? (ctor.secretField ? `The ${ctor.secretField} is shown once and cannot be retrieved again: store it now.` : undefined);
    const dryRun = typeof result === 'object' && result !== null && 'dryRun' in result;
    if (notice && !dryRun) this.warn(notice);
    const text = render(result, this.renderOptions());
    if (text) process.stdout.write(text);
  }

  /** A writer for results that arrive page by page (jsonl and csv stream; others buffer). */
  protected rowWriter(): RowWriter {
    return createRowWriter(this.renderOptions(), (chunk) => process.stdout.write(chunk));
  }

  /** A line for people, on stderr. */
  protected warn(message: string | Error): string | Error {
    process.stderr.write(`${typeof message === 'string' ? message : message.message}\n`);
    return message;
  }

  protected info(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  private readonly trailer: string[] = [];

  /** A line for people, on stderr once the result is printed (where a reader of a table looks next). */
  protected infoAfterOutput(message: string): void {
    this.trailer.push(message);
  }

  /** The hint when the deployment has no route the command called (ROUTE_NOT_FOUND): a command whose route a
   * known release moved or dropped says what to do there instead. */
  protected missingRouteHint(): string {
    return 'The deployment may be older than this feature of svc: ask its operator which release it runs, or check --base-url.';
  }

  /** What decides the hint under an HTTP error (see `hintFor`); `svc login` adds that it is signing in. */
  protected hintContext(): HintContext {
    const profile = (this.flags as Record<string, unknown> | undefined)?.profile;
    const env = (name: string) => (process.env[name] ? name : undefined);
    return {
      credentialsFrom: (env('SVC_API_KEY') ?? env('SVC_TOKEN')) as HintContext['credentialsFrom'],
      profile: typeof profile === 'string' && profile !== '' ? profile : undefined,
    };
  }

  /** How the client's retries are shown: on stderr when it is a terminal, or with --debug (CLI.md "Retries"). */
  protected retryNotice(info: RetryInfo): void {
    if (!this.terminal.stderrIsTTY && (this.flags as Record<string, unknown> | undefined)?.debug !== true) return;
    const why = info.status !== undefined ? `HTTP ${info.status}` : (info.error?.code ?? 'network error');
    this.info(`${info.method} ${info.path}: ${why}; try ${info.attempt + 1} of ${info.maxAttempts} in ${(info.delayMs / 1000).toFixed(1)} s`);
  }

  protected async catch(err: Error): Promise<never> {
    const jsonErrors = this.flags?.output === 'json' || process.argv.some((a, i, all) => (a === '-o' || a === '--output') && all[i + 1] === 'json') || process.argv.includes('--output=json');
    const debug = this.flags?.debug === true || /(^|,)svc(\*|:)/.test(process.env.DEBUG ?? '');
    let status: number | undefined;
    let code: string | undefined;
    let exitCode: number = ExitCode.UNEXPECTED;
    let message = err.message;
    let hint: string | undefined;
    let retryAfterSeconds: number | undefined;

    if (err instanceof ExitError) throw err;
    // Ctrl-C at a prompt or during work: the user knows; exit 130 with no message, unless the command has one
    // (how to resume an export).
    const bareInterrupt = err instanceof InterruptedError && err.message === new InterruptedError().message && err.hint === undefined;
    if (isPromptInterrupted(err) || bareInterrupt) return this.exit(ExitCode.INTERRUPTED);
    if (err instanceof ApiError) {
      status = err.status;
      code = err.code;
      exitCode = exitCodeForStatus(err.status, err.code);
      hint = hintFor(err.status, err.code, this.hintContext());
      message = `${err.message} (${[err.code, `HTTP ${err.status}`].filter(Boolean).join(', ')})`;
      const route = unknownRoutePath(err);
      if (route !== undefined) {
        // Not a missing record: the deployment has no such route (issue 15 item 4). Still exit 5 (HTTP 404).
        code = 'ROUTE_NOT_FOUND';
        message = `This deployment has no route ${route} (${code}, HTTP 404)`;
        hint = this.missingRouteHint();
      }
      const wait = retryAfterMs(headerValue(err.headers, 'retry-after'));
      if (wait !== undefined && err.status === 429) {
        retryAfterSeconds = Math.ceil(wait / 1000);
        hint = `Try again in ${duration(wait)} (after ${new Date(Date.now() + wait).toISOString().slice(0, 19)}Z).`;
      }
    } else if (err instanceof UnexpectedResponseError) {
      exitCode = ExitCode.SERVER;
      status = err.status;
      code = 'UNEXPECTED_RESPONSE';
      hint = 'Check --base-url (or the profile\'s, `svc profiles show`): it is the root URL of the deployment, e.g. https://rmm.example.com.';
    } else if (err instanceof NetworkError) {
      exitCode = ExitCode.SERVER;
      code = 'NETWORK_ERROR';
      hint = 'Is the server running? Check --base-url or the profile (`svc profiles show`).';
    } else if (err instanceof UsageError) {
      exitCode = ExitCode.USAGE;
      code = err.code;
    } else if (err instanceof CommandError) {
      exitCode = err.exitCode;
      code = err.code;
      hint = err.hint;
      status = err.status;
    }

    process.stderr.write(`Error: ${message}\n`);
    if (hint) process.stderr.write(`${hint}\n`);
    if (jsonErrors) {
      const error = { status: status ?? null, code: code ?? null, message: err.message, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
      process.stderr.write(`${JSON.stringify({ error })}\n`);
    }
    if (debug && err.stack) process.stderr.write(`${err.stack}\n`);
    else if (exitCode === ExitCode.UNEXPECTED) process.stderr.write('Run again with --debug for details.\n');
    return this.exit(exitCode);
  }
}
