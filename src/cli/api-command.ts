import { holdsSecret } from './secrets-read.js';
import { Flags } from './flags.js';
import type { z } from 'zod';
import type { EndpointDef, RequestOf, ResponseOf } from '../contract/endpoint.js';
import type { ClientEndpoint } from '../contract/projection.js';
import { call, contractEndpoint, fillPath, type CallResult } from '../client/contract-client.js';
import { paginatePages, type Page } from '../client/paginate.js';
import { BaseCommand, type CommandClass } from './base-command.js';
import type { HintContext } from './exit-codes.js';
import { confirmOrRefuse, UsageError } from './prompts.js';
import { readDataFile } from './files.js';
import { FlagValueError, kebab, requireFields, startOfDayUtc, valuesFromFlags, type FieldFlags } from './schema-flags.js';
import { CliSession } from './session.js';

/** Flags of every command that talks to a server. */
export const connectionFlags = {
  profile: Flags.string({ char: 'p', summary: 'Profile to use (default: the selected profile).', env: 'SVC_PROFILE', helpGroup: 'GLOBAL' }),
  'base-url': Flags.string({ summary: 'Base URL of the deployment, e.g. https://rmm.example.com.', env: 'SVC_BASE_URL', helpGroup: 'GLOBAL' }),
  retries: Flags.integer({ summary: 'Tries for idempotent requests (429, 502-504, resets).', min: 1, max: 10, helpGroup: 'GLOBAL' }),
  timeout: Flags.integer({ summary: 'Seconds each try of a request may wait for the server (default 30).', min: 1, max: 3600, helpGroup: 'GLOBAL' }),
};

/** Flags of every command that changes something (CLI.md "Safety", "Scripting conveniences"). */
export const mutationFlags = {
  yes: Flags.boolean({ char: 'y', summary: 'Do not ask for confirmation.' }),
  'dry-run': Flags.boolean({ summary: 'Validate and print the request that would be sent; send nothing.' }),
};

/** Flags of commands that create (the server replays a repeated key instead of creating twice). */
export const createFlags = {
  ...mutationFlags,
  'idempotency-key': Flags.string({ summary: 'Idempotency-Key to send (default: a random one per invocation).' }),
  'from-file': Flags.string({ summary: 'JSON or YAML file with the whole body; flags override its fields.' }),
};

/** The same for creates the server does not replay (no --idempotency-key it would ignore). */
export const unkeyedCreateFlags = { ...mutationFlags, 'from-file': createFlags['from-file'] };

export const updateFlags = {
  ...mutationFlags,
  'from-file': Flags.string({ summary: 'JSON or YAML file with the fields to change; flags override its fields.' }),
};

/** Flags of paged lists. */
export const listFlags = {
  limit: Flags.integer({ summary: 'Items per page (1-100).', min: 1, max: 100 }),
  page: Flags.integer({ summary: 'Page to fetch (from 1).', min: 1 }),
  all: Flags.boolean({ summary: 'Follow every page (streams with -o jsonl and csv).' }),
};

/** Body fields whose value is a secret by name (a password, a token, an API or private key, a one-time code, a chat
 * webhook URL). A field named `key` alone is a header's name, not a secret. */
const SECRET_FIELDS = /password|secret|token|.key$|keyvalue$|webhookurl$|^(code|otp)$|(mfa|recovery)code$/i;
/** Headers (a dry run's own, a webhook's custom ones) whose value is a credential. */
export const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie)$|token|secret|auth|session|signature|password|(?<!idempotency-)key$/i;

/** A zod issue as `--flag: message`, so a dry run names the flag that would fix it. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const [first, ...rest] = issue.path;
  if (first === undefined) return issue.message;
  const name = typeof first === 'string' ? `--${kebab(first)}` : String(first);
  return `${[name, ...rest.map(String)].join('.')}: ${issue.message}`;
}

/**
 * A body as a dry run shows it (CLI.md "Scripting conveniences": "body with secrets redacted"): every value this
 * process was given as a secret (cli/secrets-read.ts), wherever it lands; fields named like secrets; the value of
 * a `{key, value}` header pair whose name is a credential's; and what a notification channel's `config` holds as
 * secrets (its `url` and every `headers` value, as the server masks them: 02 §2.4).
 */
export function redact(value: unknown, name = '', parent = ''): unknown {
  if (typeof value === 'string') {
    const secret = holdsSecret(value) || SECRET_FIELDS.test(name) || (parent === 'config' && name === 'url') || parent === 'headers';
    return secret ? '[redacted]' : value;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item));
  if (value && typeof value === 'object') {
    const header = value as { key?: unknown; value?: unknown };
    const secretHeader = typeof header.key === 'string' && typeof header.value === 'string' && SECRET_HEADERS.test(header.key);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretHeader && k === 'value' ? '[redacted]' : redact(v, k, name)]));
  }
  return value;
}

/** What `--dry-run` prints instead of sending (CLI.md "Scripting conveniences"). */
export interface DryRunRequest {
  dryRun: true;
  method: string;
  url: string;
  idempotencyKey?: string;
  body: unknown;
}

/** Thrown by `call` under --dry-run: the command stops at the first request it would send, and that request
 * is its output (exit 0). A throw rather than a return keeps every call typed as the contract's answer. */
class DryRunStop extends Error {
  constructor(readonly request: DryRunRequest) {
    super('dry run');
  }
}

export interface CallOptions {
  /** Send no credentials (sign-in, registration, a key checked by its own header). */
  anonymous?: boolean;
}

/** The request argument of `call`: optional when nothing in it is required. */
type RequestArgs<E extends EndpointDef> =
  Partial<RequestOf<E>> extends RequestOf<E> ? [request?: RequestOf<E>, options?: CallOptions] : [request: RequestOf<E>, options?: CallOptions];

/** A command's typed call (ApiCommand's `call`), for helpers that make calls on a command's behalf. */
export type Call = <E extends EndpointDef>(def: ClientEndpoint<E>, ...request: RequestArgs<E>) => Promise<CallResult<E>>;

/** A list request: the endpoint's request without the page and limit that `list` sets. */
export type ListRequest<E extends EndpointDef> = Omit<RequestOf<E>, 'query'> & {
  query?: Omit<NonNullable<RequestOf<E>['query']>, 'page' | 'limit'>;
};
/** The same for a list paged by offset: its request without the offset and limit that `listByOffset` sets. */
export type OffsetListRequest<E extends EndpointDef> = Omit<RequestOf<E>, 'query'> & {
  query?: Omit<NonNullable<RequestOf<E>['query']>, 'offset' | 'limit'>;
};
export type ItemOf<E extends EndpointDef> = ResponseOf<E> extends Page<infer I> ? I : never;

/** A command that calls the API: a lazily opened session, one typed call (with --dry-run for everything but
 * GET), confirmation, bodies from flags and files, paging, and Ctrl-C passed on to the request in flight. */
export abstract class ApiCommand<T extends CommandClass> extends BaseCommand<T> {
  static override baseFlags = { ...BaseCommand.baseFlags, ...connectionFlags };

  private sessionPromise: Promise<CliSession> | undefined;
  /** The last request sent carried an API key: a 401 then gets the hint that the route may not take keys. */
  private sentApiKey = false;

  protected session(): Promise<CliSession> {
    const flags = this.flags as Record<string, unknown>;
    return (this.sessionPromise ??= CliSession.open({
      profile: flags.profile as string | undefined,
      baseUrl: flags['base-url'] as string | undefined,
      retries: flags.retries as number | undefined,
      timeoutSeconds: flags.timeout as number | undefined,
      onRetry: (info) => this.retryNotice(info),
    }));
  }

  /** Asks on a terminal; without one and without --yes, refuses with exit 2. A dry run sends nothing, so it
   * needs no confirmation. */
  protected async confirm(message: string): Promise<void> {
    const flags = this.flags as Record<string, unknown>;
    if (flags['dry-run'] === true) return;
    await confirmOrRefuse(message, { yes: flags.yes === true, terminal: this.terminal });
  }

  /**
   * The one way a command calls the API: sends a contract call and resolves to the contract's answer (the
   * unread response for raw endpoints). With --dry-run, a call that is not a GET is not sent: the command
   * ends there and prints the request instead (catch nothing around it but ApiError).
   */
  protected async call<E extends EndpointDef>(def: ClientEndpoint<E>, ...[request, options = {}]: RequestArgs<E>): Promise<CallResult<E>> {
    const req = (request ?? {}) as RequestOf<E>;
    if (def.method !== 'GET' && (this.flags as Record<string, unknown>)['dry-run'] === true) throw new DryRunStop(await this.describe(def, req));
    const session = await this.session();
    const http = options.anonymous ? session.anonymousHttp() : session.http();
    this.sentApiKey = options.anonymous ? Object.keys(req.headers ?? {}).some((h) => h.toLowerCase() === 'x-api-key') : session.usesApiKey;
    return call(http, def, { ...req, headers: this.headersFor(def, req) }, { signal: this.interrupt.signal });
  }

  /** One page (the items), or with --all every page: streamed for jsonl/csv, collected otherwise. `items`
   * finds the page in an answer that does not put it in `data` (`{requests, pagination}`, or `{data, total}`
   * with the page and limit asked for). */
  protected list<E extends EndpointDef>(def: ClientEndpoint<E>, request: ListRequest<E>): Promise<ItemOf<E>[] | undefined>;
  protected list<E extends EndpointDef, I>(
    def: ClientEndpoint<E>,
    request: ListRequest<E>,
    items: (answer: CallResult<E>, page: number, limit: number) => Page<I>,
  ): Promise<I[] | undefined>;
  protected list<E extends EndpointDef, I>(
    def: ClientEndpoint<E>,
    request: ListRequest<E>,
    items: (answer: CallResult<E>, page: number, limit: number) => Page<I> = (answer) => answer as Page<I>,
  ): Promise<I[] | undefined> {
    // The list request less page and limit, completed here: the contract's query type, by construction.
    return this.walkPages(async (page, limit) => items(await this.call(def, ...([{ ...request, query: { ...request.query, page, limit } }] as RequestArgs<E>)), page, limit));
  }

  /** The same for a list paged by `offset` and `limit` that answers its rows and a `total`
   * (`{notifications, total}`): the same --limit, --page and --all as every other list (CLI.md "Lists"). */
  protected listByOffset<E extends EndpointDef, I>(
    def: ClientEndpoint<E>,
    request: OffsetListRequest<E>,
    items: (answer: CallResult<E>) => { data: I[]; total: number },
  ): Promise<I[] | undefined> {
    return this.walkPages(async (page, limit) => {
      const query = { ...request.query, offset: (page - 1) * limit, limit };
      const { data, total } = items(await this.call(def, ...([{ ...request, query }] as RequestArgs<E>)));
      return { data, pagination: { page, limit, total } };
    });
  }

  private async walkPages<I>(fetch: (page: number, limit: number) => Promise<Page<I>>): Promise<I[] | undefined> {
    const flags = this.flags as Record<string, unknown>;
    const limit = (flags.limit as number | undefined) ?? (flags.all === true ? 100 : 50);
    const fetchPage = (page: number) => fetch(page, limit);
    if (flags.all !== true) {
      const page = (flags.page as number | undefined) ?? 1;
      const { data, pagination } = await fetchPage(page);
      // A person reading one page should know it is not all (CLI.md "Output"); scripts read the JSON.
      const shown = (page - 1) * limit + data.length;
      if (this.terminal.stderrIsTTY && data.length > 0 && shown < pagination.total)
        this.infoAfterOutput(`showing ${page > 1 ? `${(page - 1) * limit + 1}-${shown}` : shown} of ${pagination.total}; --all for every page`);
      return data;
    }
    if (this.format === 'jsonl' || this.format === 'csv') {
      const writer = this.rowWriter();
      for await (const page of paginatePages(fetchPage)) writer.rows(page);
      writer.end();
      return undefined;
    }
    const all: I[] = [];
    for await (const page of paginatePages(fetchPage)) all.push(...page);
    return all;
  }

  /** A JSON or YAML file checked with a contract schema: a file that does not fit is a usage error (exit 2). */
  protected async readChecked<S extends z.ZodType>(file: string, flag: string, schema: S): Promise<z.output<S>> {
    const parsed = schema.safeParse(await readDataFile(file, flag));
    if (!parsed.success) throw new UsageError(`${flag} ${file}: ${parsed.error.issues.map(describeIssue).join('; ')}`, flag);
    return parsed.data;
  }

  /** The request a dry run prints (and `--dry-run` of a bulk command prints for each of its requests),
   * after checking the body with the contract, since no server sees it. */
  protected async describe<E extends EndpointDef>(def: ClientEndpoint<E>, request: RequestOf<E>): Promise<DryRunRequest> {
    const schema = def.body && (await contractEndpoint(def)).body;
    if (schema) {
      const parsed = schema.safeParse(request.body ?? {});
      if (!parsed.success) throw new UsageError(`Invalid input: ${parsed.error.issues.map(describeIssue).join('; ')}`);
    }
    const session = await this.session();
    const path = fillPath(def.fullPath, request.params as Record<string, unknown> | undefined);
    const search = new URLSearchParams(
      Object.entries((request.query ?? {}) as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    const query = search ? `?${search}` : '';
    const headers = this.headersFor(def, request);
    return {
      dryRun: true,
      method: def.method,
      url: `${session.connection.baseUrl}${path}${query}`,
      ...(def.idempotent ? { idempotencyKey: headers['idempotency-key'] ?? '(random per invocation)' } : {}),
      body: redact(request.body ?? null),
    };
  }

  private headersFor(def: ClientEndpoint, request: { headers?: Record<string, string> }): Record<string, string> {
    const key = (this.flags as Record<string, unknown>)['idempotency-key'];
    return { ...request.headers, ...(def.idempotent && typeof key === 'string' ? { 'idempotency-key': key } : {}) };
  }

  protected override hintContext(): HintContext {
    return { ...super.hintContext(), apiKey: this.sentApiKey };
  }

  protected override async catch(err: Error): Promise<never> {
    if (err instanceof DryRunStop) {
      this.print(err.request);
      return this.exit(0);
    }
    return super.catch(err);
  }

  /** A body from --from-file (JSON or YAML) with the flags of `body` laid over it, typed as the endpoint's body
   * (the server, or a dry run, checks it against the contract). */
  protected async bodyFrom<B>(body: FieldFlags<B>): Promise<B> {
    const flags = this.flags as Record<string, unknown>;
    let base: Record<string, unknown> = {};
    const file = flags['from-file'];
    if (typeof file === 'string') {
      const parsed = await readDataFile(file, '--from-file');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--from-file ${file} must hold one object`, '--from-file');
      base = parsed as Record<string, unknown>;
    }
    const merged = { ...base, ...this.valuesOf(body) };
    try {
      requireFields(body.fields, merged);
    } catch (err) {
      if (err instanceof FlagValueError) throw new UsageError(err.message, err.flag);
      throw err;
    }
    return merged as B;
  }

  /** Query filters from the flags of `query` (only those given), typed as the endpoint's query. */
  protected queryFrom<Q>(query: FieldFlags<Q>): Partial<Q> {
    return this.valuesOf(query) as Partial<Q>;
  }

  /** A date-time flag the command declares itself, by the rule of the contract's: a date only is the start of
   * that day in UTC. */
  protected dateTime(flag: string, value: string): string {
    return this.flagValue(() => startOfDayUtc(flag, value));
  }

  private valuesOf(fields: FieldFlags<unknown>): Record<string, unknown> {
    return this.flagValue(() => valuesFromFlags(fields.fields, this.flags));
  }

  /** A flag value read back, its refusal an input error (exit 2). */
  private flagValue<V>(read: () => V): V {
    try {
      return read();
    } catch (err) {
      if (err instanceof FlagValueError) throw new UsageError(err.message, err.flag);
      throw err;
    }
  }
}
