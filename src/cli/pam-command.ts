import { ApiError, unknownRoutePath } from '../client/errors.js';
import { paginatePages, type Page } from '../client/paginate.js';
import { ApiCommand, type Call } from './api-command.js';
import { idArg } from './args.js';
import { withText, type CommandText } from './resource-commands.js';
import { CommandError } from './base-command.js';
import { ExitCode } from './exit-codes.js';
import { Flags } from './flags.js';

/** What the `svc pam …` commands share (01 §4.9; CLI.md "Output"). */

export const RULE_COLUMNS = ['id', 'name', 'verdict', 'priority', 'enabled', 'siteId', 'suspendedVerdict', 'updatedAt'];
export const REQUEST_COLUMNS = [
  'id',
  'status',
  'flowType',
  'deviceHostname',
  'subjectUsername',
  'targetExecutablePath',
  'toolName',
  'riskTier',
  'requestedAt',
  'expiresAt',
];
export const DECISION_COLUMNS = ['id', 'status', 'enforcementStatus', 'expiresAt', 'reason'];
export const SIGNER_GROUP_COLUMNS = ['id', 'name', 'signers', 'thumbprints', 'updatedAt'];
export const CONFIG_COLUMNS = ['orgId', 'defaultUnmatchedVerdict', 'defaultApprovalDurationMinutes', 'updatedAt'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The factor a 401 `reauth_required` asks for (the server says which: `password` or `mfa_code`); undefined for
 * any other error. */
export function reauthFactor(err: unknown): 'password' | 'mfa_code' | undefined {
  if (!(err instanceof ApiError) || err.status !== 401 || err.code !== 'reauth_required') return undefined;
  return isRecord(err.body) && err.body.factor === 'mfa_code' ? 'mfa_code' : 'password';
}

/** A one-line description of an elevation request for a confirmation prompt. */
export function describeRequest(request: unknown): string | undefined {
  if (!isRecord(request)) return undefined;
  const text = (key: string) => (typeof request[key] === 'string' ? request[key] : undefined);
  const what =
    request.flowType === 'ai_tool_action'
      ? `AI tool ${text('toolName') ?? '?'} (risk tier ${typeof request.riskTier === 'number' ? request.riskTier : '?'})`
      : (text('targetExecutablePath') ?? text('reason') ?? String(request.flowType));
  const who = text('subjectUsername');
  const where = text('deviceHostname');
  return `${what}${who ? ` for ${who}` : ''}${where ? ` on ${where}` : ''}`;
}

/** At most this many list pages are read looking for one item (100 items each). */
const FALLBACK_MAX_PAGES = 50;

/**
 * `pam rules get`, `pam requests get`, `pam signer-groups get` on a deployment without the `get` route (issue 15
 * item 4): its 404 naming an unknown route is answered from the list instead, said once on stderr. A missing
 * record (404 with a code) is not: it stays exit 5. An id in no page of the list is exit 5 too.
 */
export async function getOrFindInList<I extends { id: string }>(options: {
  get: () => Promise<I>;
  /** Yields the list page by page (stops by itself; read at most FALLBACK_MAX_PAGES pages). */
  pages: () => AsyncIterable<I[]>;
  what: string;
  id: string;
  info: (line: string) => void;
}): Promise<I> {
  try {
    return await options.get();
  } catch (err) {
    const route = unknownRoutePath(err);
    if (route === undefined) throw err;
    options.info(`This deployment has no route ${route}; looking the ${options.what.toLowerCase()} up in the list instead.`);
  }
  let read = 0;
  for await (const page of options.pages()) {
    const found = page.find((item) => item.id === options.id);
    if (found) return found;
    if (++read >= FALLBACK_MAX_PAGES) break;
  }
  throw new CommandError(`${options.what} not found: ${options.id} is in no page of the list`, ExitCode.NOT_FOUND, 'NOT_FOUND', undefined, 404);
}

/** One answer as a single page, for lists the API does not page. */
export async function* onePage<I>(items: () => Promise<I[]>): AsyncGenerator<I[], void, undefined> {
  yield await items();
}

/** `pam … get <id>`: the get route, or on a deployment without it the item looked up in the list
 * (`getOrFindInList`); `list` reads the list, one page per call (`paged`: 100 items a page, by page number). Each
 * command makes its own calls, so the contract types every request. */
export function findableGetCommand<I extends { id: string }>(
  what: string,
  lookups: {
    get: (call: Call, id: string) => Promise<I>;
    list: (call: Call, query: { orgId?: string; page?: number; limit?: number }) => Promise<I[] | Page<I>>;
    paged?: boolean;
  },
  text: CommandText,
) {
  const flags = {
    'org-id': Flags.string({
      summary: 'Organization whose list is searched when the deployment has no get route (partner and system callers).',
    }),
  };
  class FindableGetCommand extends ApiCommand<{ args: ReturnType<typeof idArg>; flags: typeof flags }> {
    static override args = idArg(what);
    static override flags = flags;

    async run() {
      const id = this.args.id;
      const call: Call = (def, ...request) => this.call(def, ...request);
      // The list's own filter: a deployment that lists one organization at a time needs it from a partner caller.
      const orgId = this.flags['org-id'];
      const page = async (n: number): Promise<Page<I>> => {
        const items = await lookups.list(call, { ...(orgId ? { orgId } : {}), ...(lookups.paged ? { page: n, limit: 100 } : {}) });
        return Array.isArray(items) ? { data: items, pagination: { page: 1, limit: items.length, total: items.length } } : items;
      };
      return getOrFindInList({
        get: () => lookups.get(call, id),
        pages: () => (lookups.paged ? paginatePages(page) : onePage(async () => (await page(1)).data)),
        what,
        id,
        info: (line) => this.info(line),
      });
    }
  }
  return withText(FindableGetCommand, text);
}
