import { headerValue, type ResponseHeaders } from './errors.js';

/** 01 §4 "Paged lists" envelope. */
export interface PageInfo {
  page: number;
  limit: number;
  total: number;
}

export interface Page<T> {
  data: T[];
  pagination: PageInfo;
}

export interface PaginateOptions {
  /** First page to fetch (default 1). */
  startPage?: number;
  /** Stop after this many pages, whatever the totals say. */
  maxPages?: number;
}

/** True when one more page may hold rows. */
function hasNext(pagination: PageInfo, page: number, received: number): boolean {
  if (received === 0) return false;
  const limit = pagination.limit > 0 ? pagination.limit : received;
  return page * limit < pagination.total;
}

/** Yields each page's items (one array per page) until `page × limit ≥ total` or a page comes back empty. */
export async function* paginatePages<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  options: PaginateOptions = {},
): AsyncGenerator<T[], void, undefined> {
  let page = options.startPage ?? 1;
  for (let fetched = 0; options.maxPages === undefined || fetched < options.maxPages; fetched++) {
    const result = await fetchPage(page);
    if (result.data.length > 0) yield result.data;
    if (!hasNext(result.pagination, page, result.data.length)) return;
    page += 1;
  }
}

/** The same walk, one item at a time (for streaming `-o jsonl`). */
export async function* paginateItems<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  options: PaginateOptions = {},
): AsyncGenerator<T, void, undefined> {
  for await (const items of paginatePages(fetchPage, options)) yield* items;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asPageInfo(value: unknown): PageInfo | undefined {
  if (!isRecord(value)) return undefined;
  const { page, limit, total } = value;
  if (typeof page !== 'number' || typeof limit !== 'number' || typeof total !== 'number') return undefined;
  return { page, limit, total };
}

export interface DetectedPage {
  /** The rows: `data`, or the first array field (`requests` in PAM lists). */
  items: unknown[];
  /** Which field held them; undefined when the body itself is an array. */
  field?: string;
  pagination?: PageInfo;
}

/** Finds the rows and the paging envelope in any list body; undefined when the body holds no array. */
export function detectPage(body: unknown): DetectedPage | undefined {
  if (Array.isArray(body)) return { items: body };
  if (!isRecord(body)) return undefined;
  const pagination = asPageInfo(body.pagination);
  const field = Array.isArray(body.data) ? 'data' : Object.keys(body).find((key) => Array.isArray(body[key]));
  if (field === undefined) return undefined;
  const items = body[field];
  if (!Array.isArray(items)) return undefined;
  return { items, field, ...(pagination === undefined ? {} : { pagination }) };
}

/**
 * `svc api --paginate`: follows page numbers on any body shaped `{ <array>, pagination: {page, limit, total} }`
 * and yields each page's rows. A body without paging yields its rows (or itself) once.
 */
export async function* paginateRaw(
  fetchPage: (page: number) => Promise<unknown>,
  options: PaginateOptions = {},
): AsyncGenerator<unknown[], void, undefined> {
  let page = options.startPage ?? 1;
  for (let fetched = 0; options.maxPages === undefined || fetched < options.maxPages; fetched++) {
    const body = await fetchPage(page);
    const detected = detectPage(body);
    if (detected === undefined) {
      yield [body];
      return;
    }
    if (detected.items.length > 0) yield detected.items;
    if (detected.pagination === undefined || !hasNext(detected.pagination, page, detected.items.length)) return;
    page += 1;
  }
}

export interface CursorPageOptions<R> {
  /** Resume from this cursor (a checkpoint) instead of the start. */
  cursor?: string;
  /**
   * Ask for the next page as soon as a page's headers name its cursor, while the caller is still reading
   * that page's body: the server prepares one page while the client writes the other. A page fetched ahead
   * that will not be read (the caller stopped or failed) goes to `discard`, which must release its body.
   */
  readAhead?: { discard: (response: R) => void };
}

/** The cursor after a page: undefined at the end, an Error when the headers make no sense. */
function cursorAfter(headers: ResponseHeaders, seen: Set<string>): string | Error | undefined {
  const hasMore = headerValue(headers, 'x-has-more')?.trim().toLowerCase() === 'true';
  if (!hasMore) return undefined;
  const next = headerValue(headers, 'x-next-cursor');
  if (next === undefined || next === '') return new Error('The server said X-Has-More: true but sent no X-Next-Cursor');
  if (seen.has(next)) return new Error(`The server sent cursor ${next} twice; stopping instead of looping`);
  seen.add(next);
  return next;
}

/**
 * Cursor streams (the PAM audit export): calls `fetch` with no cursor, then with each `X-Next-Cursor` while
 * `X-Has-More` is `true`, yielding every response. The caller consumes each body before asking for the next;
 * with `readAhead` the next request is already under way by then.
 */
export async function* paginateCursor<R extends { headers: ResponseHeaders }>(
  fetch: (cursor?: string) => Promise<R>,
  options: CursorPageOptions<R> = {},
): AsyncGenerator<R, void, undefined> {
  const seen = new Set<string>();
  let ahead: Promise<R> | undefined;
  let next: Promise<R> | undefined = fetch(options.cursor);
  try {
    while (next !== undefined) {
      const response = await next;
      next = undefined;
      const cursor = cursorAfter(response.headers, seen);
      if (options.readAhead !== undefined && typeof cursor === 'string') {
        ahead = fetch(cursor);
        // Handled here so that a failure while the caller reads this page is not an unhandled rejection;
        // it is thrown when the page is awaited.
        void ahead.catch(() => undefined);
      }
      yield response;
      if (cursor instanceof Error) throw cursor;
      if (cursor === undefined) return;
      next = ahead ?? fetch(cursor);
      ahead = undefined;
    }
  } finally {
    const discard = options.readAhead?.discard;
    if (ahead !== undefined && discard !== undefined) void ahead.then(discard, () => undefined);
  }
}
