import { isCiSet } from './terminal.js';

/**
 * Progress for work that can take more than a second (CLI.md "Output": spinners only on a terminal): a spinner
 * with a line of text that the work updates (rows, pages, items done). It draws on stderr only, only when stderr
 * is a terminal and CI is not set, and without colour when colour is off (NO_COLOR, --no-color); otherwise it
 * draws nothing at all, and ora is not even loaded.
 */
export interface Progress {
  /** Replaces the text beside the spinner. */
  update(text: string): void;
  /** Ends the spinner: the last text stays as a plain line (`keep`), or the line is cleared. */
  stop(options?: { keep?: boolean }): void;
}

/** The stream progress draws on: stderr, or a stand-in in tests. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean };

export interface ProgressOptions {
  /** Colour the spinner (the command's terminal colour: off with NO_COLOR or --no-color). */
  color: boolean;
  stream?: ProgressStream;
  env?: Record<string, string | undefined>;
}

/** Whether progress is drawn at all: on a terminal's stderr, outside CI. */
export function progressShown(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  return stream.isTTY === true && !isCiSet(env.CI);
}

const SILENT: Progress = { update: () => undefined, stop: () => undefined };

/** Starts a spinner with `text`; a silent one where progress is not shown. */
export async function startProgress(text: string, options: ProgressOptions): Promise<Progress> {
  const stream = options.stream ?? process.stderr;
  if (!progressShown(stream, options.env)) return SILENT;
  const { default: ora } = await import('ora');
  // discardStdin would put stdin in raw mode, where Ctrl-C is no SIGINT: the interrupt path needs the signal.
  const spinner = ora({ text, stream, color: options.color ? 'cyan' : false, discardStdin: false, isEnabled: true }).start();
  let last = text;
  return {
    update(next) {
      last = next;
      spinner.text = next;
    },
    stop({ keep = false } = {}) {
      if (!spinner.isSpinning) return;
      if (keep) spinner.stopAndPersist({ symbol: '', text: last });
      else spinner.stop();
    },
  };
}

/** Runs `work` with a spinner that stops when it settles, however it settles. */
export async function withProgress<T>(text: string, options: ProgressOptions, work: (progress: Progress) => Promise<T>): Promise<T> {
  const progress = await startProgress(text, options);
  try {
    return await work(progress);
  } finally {
    progress.stop();
  }
}
