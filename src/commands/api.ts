import { pipeline } from 'node:stream/promises';
import { Args, Flags } from '../cli/flags.js';
import { ApiCommand, SECRET_HEADERS, mutationFlags, redact } from '../cli/api-command.js';
import { apiPath, fieldsToObject, fieldsToQuery, parseHeader, readsStdin, type RawField } from '../cli/api-fields.js';
import { readFlagFile } from '../cli/files.js';
import { UsageError } from '../cli/prompts.js';
import { holdsSecret } from '../cli/secrets-read.js';
import { readStdin } from '../cli/stdin.js';
import { headerValue } from '../client/errors.js';
import type { RequestMethod } from '../client/http.js';
import { detectPage, paginateRaw } from '../client/paginate.js';

const METHODS: readonly RequestMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

function asMethod(text: string): RequestMethod | undefined {
  const upper = text.toUpperCase();
  return METHODS.find((m) => m === upper);
}

function isJson(contentType: string | undefined): boolean {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || mime.endsWith('+json');
}

export default class Api extends ApiCommand<typeof Api> {
  static override summary = 'Send an authenticated request to any API path (the escape hatch, like `gh api`)';
  static override description = `Uses the same profile, credentials, retries and exit codes as every other command; a non-2xx answer fails with the server's message. PATH may leave out the /api/v1 prefix. The method defaults to GET, or POST when fields or --input are given (GET with --paginate).

Fields: -f/--raw-field key=value sends a string; -F/--field key=value sends true, false, null and numbers as JSON values and @FILE as the file's text (@- for standard input). Nested keys: settings[timezone]=UTC, tags[]=a. With GET the fields become query parameters; otherwise they make the JSON body, unless --input supplies the body, when they become query parameters.

--paginate follows the {data, pagination} envelope page by page and prints one JSON array of every item (or, with --output jsonl or csv, streams them as they arrive). JSON answers print as JSON by default (--output changes that); other answers (CSV exports) are streamed to stdout as they come. It never asks for confirmation: --yes is accepted so scripts can pass it to every mutating command alike.`;
  static override usage = ['api [METHOD] PATH [--raw-field key=value]... [--field key=value]... [--header "Name: value"]... [--input FILE|-] [--paginate]'];
  static override examples = [
    '<%= config.bin %> api GET /orgs/partners --paginate',
    '<%= config.bin %> api /orgs/partners --method POST --raw-field name=Acme --raw-field slug=acme',
    '<%= config.bin %> api PATCH /orgs/organizations/3b9e… --field maxDevices=500 --raw-field "settings[timezone]=UTC"',
    '<%= config.bin %> api POST /orgs/sites --input site.json',
    '<%= config.bin %> api GET /audit-logs/logs --raw-field action=auth.login --paginate --output jsonl',
    '<%= config.bin %> api /health',
  ];
  static override args = {
    method: Args.string({ required: true, description: 'HTTP method, or PATH when the method is left out' }),
    path: Args.string({ description: 'Path below /api/v1, with any ?query' }),
  };
  static override flags = {
    method: Flags.string({ char: 'X', summary: 'HTTP method (GET, POST, PUT, PATCH, DELETE).' }),
    'raw-field': Flags.string({ char: 'f', summary: 'A string field: key=value.', multiple: true }),
    field: Flags.string({ char: 'F', summary: 'A typed field: key=value; true, false, null and numbers as JSON, @FILE as the file text.', multiple: true }),
    header: Flags.string({ char: 'H', summary: 'An extra request header, "Name: value".', multiple: true }),
    input: Flags.string({ summary: 'JSON file to send as the body ("-" for standard input).' }),
    paginate: Flags.boolean({ summary: 'Follow every page of a {data, pagination} list.' }),
    ...mutationFlags,
  };
  static override defaultOutput = 'json' as const;

  async run() {
    const { flags, args } = this;
    let pathArg = args.path;
    let methodArg: RequestMethod | undefined;
    if (pathArg === undefined) pathArg = args.method;
    else {
      methodArg = asMethod(args.method);
      if (!methodArg) throw new UsageError(`Unknown HTTP method "${args.method}" (use ${METHODS.join(', ')})`);
    }
    const flagMethod = flags.method === undefined ? undefined : asMethod(flags.method);
    if (flags.method !== undefined && !flagMethod) throw new UsageError(`Unknown HTTP method "${flags.method}" (use ${METHODS.join(', ')})`, '--method');
    if (methodArg && flagMethod && methodArg !== flagMethod) throw new UsageError(`The method is given twice: ${methodArg} and --method ${flagMethod}`, '--method');

    const fields: RawField[] = [...(flags['raw-field'] ?? []).map((text) => ({ text, typed: false })), ...(flags.field ?? []).map((text) => ({ text, typed: true }))];
    const method: RequestMethod = methodArg ?? flagMethod ?? (!flags.paginate && (fields.length > 0 || flags.input !== undefined) ? 'POST' : 'GET');

    const full = apiPath(pathArg);
    const at = full.indexOf('?');
    const path = at < 0 ? full : full.slice(0, at);
    const query: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(at < 0 ? '' : full.slice(at + 1))) {
      const existing = query[key];
      query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? (existing as unknown[]) : [existing]), value];
    }

    // Standard input is read ahead, as a stream (cli/stdin.ts says why), by the one flag or field that takes it.
    const stdinUses = (flags.input === '-' ? 1 : 0) + fields.filter(readsStdin).length;
    if (stdinUses > 1) throw new UsageError('Standard input can be read only once (--input - or one @- field)');
    if (stdinUses === 1 && process.stdin.isTTY) throw new UsageError('Standard input is a terminal: pipe the data in');
    const stdinText = stdinUses === 1 ? await readStdin() : '';
    const fromStdin = (): string => stdinText;

    let body: unknown;
    if (flags.input !== undefined) {
      const text = flags.input === '-' ? stdinText : await readFlagFile(flags.input, '--input');
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        throw new UsageError(`--input ${flags.input} is not JSON`, '--input');
      }
      Object.assign(query, fieldsToQuery(fields, fromStdin));
    } else if (method === 'GET' || method === 'HEAD') {
      Object.assign(query, fieldsToQuery(fields, fromStdin));
    } else if (fields.length > 0) {
      body = fieldsToObject(fields, fromStdin);
    }

    const headers = Object.fromEntries((flags.header ?? []).map(parseHeader));
    if (flags.paginate && method !== 'GET') throw new UsageError('--paginate works with GET only', '--paginate');

    const session = await this.session();
    const http = session.http();
    if (flags['dry-run']) {
      const shown = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADERS.test(name) || holdsSecret(value) ? '[redacted]' : value]));
      return { dryRun: true, method, url: `${session.connection.baseUrl}${http.resolvePath(path, query)}`, headers: shown, body: redact(body ?? null) };
    }

    if (flags.paginate) {
      const writer = this.rowWriter();
      const firstPage = typeof query.page === 'string' ? Number.parseInt(query.page, 10) || 1 : 1;
      const pages = paginateRaw(async (page) => (await http.request({ method, path, query: { ...query, page }, headers })).body, { startPage: firstPage });
      for await (const items of pages) writer.rows(items);
      writer.end();
      return undefined;
    }

    const response = await http.request({ method, path, query, headers, raw: true, ...(body === undefined ? {} : { body }) });
    const contentType = headerValue(response.headers, 'content-type');
    if (!isJson(contentType)) {
      // CSV exports and other text: streamed as they arrive, never held in memory.
      try {
        await pipeline(response.body, process.stdout, { end: false });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
      }
      return undefined;
    }
    const text = await response.body.text();
    if (text === '') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return undefined;
    }
    // Row formats (and -q) show the rows of a paged envelope; json and yaml print the body as it is.
    if (this.flags.quiet || this.format === 'table' || this.format === 'csv' || this.format === 'jsonl') return detectPage(parsed)?.items ?? parsed;
    return parsed;
  }
}
