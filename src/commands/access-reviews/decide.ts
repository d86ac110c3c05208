import { Flags } from '../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { CommandError, InterruptedError } from '../../cli/base-command.js';
import { ExitCode, exitCodeForStatus, hintFor } from '../../cli/exit-codes.js';
import { withProgress } from '../../cli/progress.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { ApiError } from '../../client/errors.js';
import { accessReviews } from '../../client/endpoints.js';

const def = accessReviews.updateItem;
const body = bodyFlags(def, { descriptions: { notes: 'Why (up to 2000 characters; "null" clears the notes).' } });

/** How many decisions of a file are sent at once. */
const PARALLEL = 4;

interface Outcome {
  itemId: string;
  decision: string;
  status: 'ok' | 'error';
  error?: string;
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${[err.code, `HTTP ${err.status}`].filter(Boolean).join(', ')})`;
  return err instanceof Error ? err.message : String(err);
}

export default class AccessReviewsDecide extends ApiCommand<typeof AccessReviewsDecide> {
  static override summary =
    'Record decisions on review items: one with --item, or many from a CSV file (needs users:write)';
  static override description = `One item: --item ITEM --decision approved|revoked|pending [--notes TEXT]; prints the item as the server answers.

Many items: --from-file FILE, a CSV with a header row and the columns itemId, decision and notes (notes optional; an empty cell leaves the item's notes as they are). A .json, .yaml or .yml file holds a list of {itemId, decision, notes} objects instead. The whole file is checked before anything is sent: unknown or missing columns, decisions other than approved, revoked and pending, an itemId that appears twice or is not in the review. Any problem exits 2, listing every bad row with its line number, and nothing is sent.

Then each row is sent and its outcome printed, one row per decision: {itemId, decision, status: ok|error, error}. Exit codes: 0 when every decision was applied; 9 (incomplete result) when some failed and the others were applied (run again with the failed rows); when none was applied, the exit code of the first failure (4 for a missing permission, 6 for a completed review, ...).`;
  static override examples = [
    '<%= config.bin %> access-reviews decide 8f0e… --item 41aa… --decision approved',
    '<%= config.bin %> access-reviews decide 8f0e… --item 41aa… --decision revoked --notes "Left the company"',
    '<%= config.bin %> access-reviews decide 8f0e… --from-file decisions.csv',
    '<%= config.bin %> access-reviews decide 8f0e… --from-file decisions.csv --dry-run',
  ];
  static override args = idArg('Access review');
  static override flags = {
    item: Flags.string({
      summary: 'The item to decide on (one user-role mapping of the review).',
      exclusive: ['from-file'],
    }),
    ...body.flags,
    'from-file': Flags.string({
      summary:
        'CSV file of decisions (columns itemId, decision, notes), or a JSON/YAML list; checked whole before anything is sent.',
      exclusive: ['item', 'decision', 'notes'],
    }),
    ...mutationFlags,
  };
  static override columns = ['itemId', 'decision', 'status', 'error'];
  static override quietField = 'itemId';

  async run() {
    const reviewId = this.args.id;
    const file = this.flags['from-file'];
    if (file === undefined) {
      if (this.flags.item === undefined)
        throw new UsageError('Give --item ITEM --decision DECISION, or --from-file FILE for many decisions', '--item');
      if ((this.flags as Record<string, unknown>).decision === undefined)
        throw new UsageError('Give --decision approved, revoked or pending', '--decision');
      return this.call(def, {
        params: { id: reviewId, itemId: this.flags.item },
        body: await this.bodyFrom(body),
      });
    }

    const review = await this.call(accessReviews.get, { params: { id: reviewId } });
    if (review.status === 'completed')
      throw new CommandError(
        `Access review ${reviewId} is completed: its decisions cannot change`,
        ExitCode.CONFLICT,
        'REVIEW_COMPLETED',
      );
    const { parseDecisions, describeProblems } = await import('../../cli/decisions.js');
    const { readDataFile, readFlagFile } = await import('../../cli/files.js');
    const itemIds = new Set(review.items.map((i) => i.id));
    const structured = /\.(json|ya?ml)$/i.test(file);
    const parsed = parseDecisions(
      structured ? { data: await readDataFile(file, '--from-file') } : { csv: await readFlagFile(file, '--from-file') },
      itemIds,
    );
    if (parsed.problems.length > 0) throw new UsageError(describeProblems(file, parsed.problems), '--from-file');

    const requests = parsed.rows.map((row) => ({
      params: { id: reviewId, itemId: row.itemId },
      body: { decision: row.decision, ...(row.notes === undefined ? {} : { notes: row.notes }) },
    }));
    if (this.flags['dry-run']) return Promise.all(requests.map((request) => this.describe(def, request)));

    const outcomes: Outcome[] = [];
    const failures: unknown[] = [];
    await withProgress(`Deciding 0 of ${requests.length}…`, { color: this.terminal.color }, async (progress) => {
      let done = 0;
      const apply = async (index: number): Promise<void> => {
        const row = parsed.rows[index];
        const request = requests[index];
        if (!row || !request) return;
        try {
          await this.call(def, request);
          outcomes[index] = { itemId: row.itemId, decision: row.decision, status: 'ok' };
        } catch (err) {
          if (this.interrupt.signal.aborted)
            throw new InterruptedError(`Interrupted after ${done} of ${requests.length} decisions`, 'Try this: `svc access-reviews get` shows what was applied');
          outcomes[index] = { itemId: row.itemId, decision: row.decision, status: 'error', error: describe(err) };
          failures.push(err);
        }
        progress.update(`Deciding ${++done} of ${requests.length}…`);
      };
      // The first decision goes alone: when the caller may not decide at all (no permission, no MFA where a
      // server asks for it), that is the one error to show, and nothing else is tried.
      await apply(0);
      const [refused] = failures;
      if (refused instanceof ApiError && (refused.status === 401 || refused.status === 403)) throw refused;
      let next = 1;
      const worker = async () => {
        while (next < requests.length) await apply(next++);
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, requests.length - 1) }, worker));
    });
    const [first] = failures;

    const failed = outcomes.filter((o) => o.status === 'error').length;
    if (failed === 0) {
      this.info(
        `Applied ${outcomes.length} decision${outcomes.length === 1 ? '' : 's'} to access review ${review.name}.`,
      );
      return outcomes;
    }
    this.print(outcomes);
    if (failed === outcomes.length) {
      const status = first instanceof ApiError ? first.status : undefined;
      const code = first instanceof ApiError ? first.code : undefined;
      const exitCode = status === undefined ? ExitCode.SERVER : exitCodeForStatus(status, code);
      throw new CommandError(
        `No decision was applied: all ${failed} failed (first: ${describe(first)})`,
        exitCode,
        code,
        status === undefined ? undefined : hintFor(status, code),
      );
    }
    throw new CommandError(
      `${failed} of ${outcomes.length} decisions failed; the others were applied. Run again with the failed rows.`,
      ExitCode.INCOMPLETE,
      'PARTIAL_RESULT',
    );
  }
}
