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

/** True when one more page may hold rows. A total below 0 is unknown (an audit search with `skipCount`): then
 * only a short page ends the walk. */
function hasNext(pagination: PageInfo, page: number, received: number): boolean {
  if (received === 0) return false;
  const limit = pagination.limit > 0 ? pagination.limit : received;
  if (pagination.total < 0) return received >= limit;
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
   * Ask for later pages as soon as the headers before them name their cursors, while the caller is still
   * reading an earlier page's body: up to `pages` pages the caller has not taken yet are requested or waiting,
   * so the server prepares them while the client writes. Pages fetched ahead that will not be read (the caller
   * stopped or failed) go to `discard`, which must release their bodies.
   */
  readAhead?: { pages: number; discard: (response: R) => void };
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
 * `X-Has-More` is `true`, yielding every response in order. The caller consumes each body before asking for
 * the next; with `readAhead` the next requests are already under way by then. A page whose headers make no
 * sense is still yielded, and the error thrown after it.
 */
export async function* paginateCursor<R extends { headers: ResponseHeaders }>(
  fetch: (cursor?: string) => Promise<R>,
  options: CursorPageOptions<R> = {},
): AsyncGenerator<R, void, undefined> {
  interface Page {
    response: R;
    next: string | Error | undefined;
  }
  const ahead = options.readAhead?.pages ?? 0;
  const seen = new Set<string>();
  /** Requested and not yet taken by the caller, in order. */
  const queue: Promise<Page>[] = [];
  /** A cursor known while the queue was full: asked for when there is room. */
  let parked: string | undefined;
  let stopped = false;

  const request = (cursor: string | undefined) => {
    const page = fetch(cursor).then((response): Page => {
      const next = cursorAfter(response.headers, seen);
      if (typeof next === 'string') {
        if (!stopped && queue.length < ahead) request(next);
        else parked = next;
      }
      return { response, next };
    });
    // Handled here so that a failure while the caller reads an earlier page is not an unhandled rejection;
    // it is thrown when the page is taken.
    void page.catch(() => undefined);
    queue.push(page);
  };
  const unpark = () => {
    if (parked === undefined) return;
    const cursor = parked;
    parked = undefined;
    request(cursor);
  };

  request(options.cursor);
  try {
    for (;;) {
      const page = queue.shift();
      if (page === undefined) return;
      const { response, next } = await page;
      // Taking this page made room for one more ahead.
      if (queue.length < ahead) unpark();
      yield response;
      if (next instanceof Error) throw next;
      if (next === undefined) return;
      // Without read-ahead (or when it fell behind), the next page is asked for now.
      if (queue.length === 0) unpark();
    }
  } finally {
    stopped = true;
    const discard = options.readAhead?.discard;
    for (const page of queue.splice(0))
      if (discard !== undefined)
        void page.then(
          (p) => discard(p.response),
          () => undefined,
        );
  }
}
