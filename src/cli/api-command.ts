import { Flags } from './flags.js';
import type { z } from 'zod';
import type { EndpointDef, RequestOf } from '../contract/endpoint.js';
import type { ClientEndpoint } from '../contract/projection.js';
import { call, contractEndpoint, fillPath } from '../client/contract-client.js';
import { paginatePages } from '../client/paginate.js';
import type { Api, EndpointGroups } from '../client/contract-client.js';
import { BaseCommand, type CommandClass } from './base-command.js';
import { confirmOrRefuse, UsageError } from './prompts.js';
import { readDataFile } from './files.js';
import { FlagValueError, kebab, requireFields, valuesFromFlags, type FieldFlag } from './schema-flags.js';
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

const SECRET_KEYS = /password|secret|token|key$|^code$/i;

/** A zod issue as `--flag: message`, so a dry run names the flag that would fix it. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const [first, ...rest] = issue.path;
  if (first === undefined) return issue.message;
  const name = typeof first === 'string' ? `--${kebab(first)}` : String(first);
  return `${[name, ...rest.map(String)].join('.')}: ${issue.message}`;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEYS.test(k) && typeof v === 'string' ? '[redacted]' : redact(v)]));
  }
  return value;
}

/** A command that calls the API: a lazily opened session and typed client, confirmation, dry runs, bodies
 * from flags and files, and paging. */
export abstract class ApiCommand<T extends CommandClass> extends BaseCommand<T> {
  static override baseFlags = { ...BaseCommand.baseFlags, ...connectionFlags };

  private sessionPromise: Promise<CliSession> | undefined;

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

  /** The typed API over the areas the command calls (of src/client/endpoints.ts), e.g. `this.api({ tenancy })`. */
  protected async api<const G extends EndpointGroups>(groups: G): Promise<Api<G>> {
    return (await this.session()).api(groups);
  }

  /** Asks on a terminal; without one and without --yes, refuses with exit 2. A dry run sends nothing, so it
   * needs no confirmation. */
  protected async confirm(message: string): Promise<void> {
    const flags = this.flags as Record<string, unknown>;
    if (flags['dry-run'] === true) return;
    await confirmOrRefuse(message, { yes: flags.yes === true, terminal: this.terminal });
  }

  /** Sends one contract call, or with --dry-run prints the request and sends nothing. */
  protected async send<E extends EndpointDef>(def: ClientEndpoint<E>, request: RequestOf<E>): Promise<unknown> {
    const flags = this.flags as Record<string, unknown>;
    const headers: Record<string, string> = { ...(request.headers ?? {}) };
    if (def.idempotent && typeof flags['idempotency-key'] === 'string') headers['idempotency-key'] = flags['idempotency-key'];
    if (flags['dry-run'] === true) {
      // Nothing reaches the server to validate the input, so the contract does it here (CLI.md "--dry-run").
      const schema = def.body && (await contractEndpoint(def)).body;
      if (schema) {
        const parsed = schema.safeParse(request.body ?? {});
        if (!parsed.success) throw new UsageError(`Invalid input: ${parsed.error.issues.map(describeIssue).join('; ')}`);
      }
      const session = await this.session();
      const path = fillPath(def.fullPath, request.params as Record<string, unknown> | undefined);
      const query = request.query ? `?${new URLSearchParams(Object.entries(request.query as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
      return {
        dryRun: true,
        method: def.method,
        url: `${session.connection.baseUrl}${path}${query}`,
        ...(def.idempotent ? { idempotencyKey: headers['idempotency-key'] ?? '(random per invocation)' } : {}),
        body: redact(request.body ?? null),
      };
    }
    const session = await this.session();
    return call(session.http(), def, { ...request, headers });
  }

  /** A body from --from-file (JSON or YAML) with the given flag fields laid over it. */
  protected async bodyFrom(fields: readonly FieldFlag[]): Promise<Record<string, unknown>> {
    const flags = this.flags as Record<string, unknown>;
    let base: Record<string, unknown> = {};
    const file = flags['from-file'];
    if (typeof file === 'string') {
      const parsed = await readDataFile(file, '--from-file');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--from-file ${file} must hold one object`, '--from-file');
      base = parsed as Record<string, unknown>;
    }
    try {
      const body = { ...base, ...valuesFromFlags(fields, flags) };
      requireFields(fields, body);
      return body;
    } catch (err) {
      if (err instanceof FlagValueError) throw new UsageError(err.message, err.flag);
      throw err;
    }
  }

  /** Query filters from the given flag fields (only the flags that were given), typed as the endpoint's query. */
  protected queryFrom<E extends EndpointDef>(
    _def: ClientEndpoint<E>,
    fields: readonly FieldFlag[],
  ): Partial<NonNullable<RequestOf<E>['query']>> {
    try {
      return valuesFromFlags(fields, this.flags) as Partial<NonNullable<RequestOf<E>['query']>>;
    } catch (err) {
      if (err instanceof FlagValueError) throw new UsageError(err.message, err.flag);
      throw err;
    }
  }

  /** One page (the items), or with --all every page: streamed for jsonl/csv, collected otherwise. */
  protected async list<I>(fetchPage: (page: number, limit: number) => Promise<{ data: I[]; pagination: { page: number; limit: number; total: number } }>): Promise<I[] | undefined> {
    const flags = this.flags as Record<string, unknown>;
    const limit = (flags.limit as number | undefined) ?? (flags.all === true ? 100 : 50);
    if (flags.all !== true) {
      const page = (flags.page as number | undefined) ?? 1;
      const { data, pagination } = await fetchPage(page, limit);
      // A person reading one page should know it is not all (CLI.md "Output"); scripts read the JSON.
      const shown = (page - 1) * limit + data.length;
      if (this.terminal.stderrIsTTY && data.length > 0 && shown < pagination.total)
        this.infoAfterOutput(`showing ${page > 1 ? `${(page - 1) * limit + 1}-${shown}` : shown} of ${pagination.total}; --all for every page`);
      return data;
    }
    if (this.format === 'jsonl' || this.format === 'csv') {
      const writer = this.rowWriter();
      for await (const items of paginatePages((p) => fetchPage(p, limit))) writer.rows(items);
      writer.end();
      return undefined;
    }
    const all: I[] = [];
    for await (const items of paginatePages((p) => fetchPage(p, limit))) all.push(...items);
    return all;
  }
}
