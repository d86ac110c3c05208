import { setImmediate as nextTurn } from 'node:timers';
import type Database from 'better-sqlite3';
import { DomainError } from '../errors.js';

/**
 * Group commit (README, Architecture: "Writes are committed in groups"): the transactions that start in one turn
 * of the event loop share one SQLite transaction, committed once at the end of the turn (`setImmediate`), so the
 * cost of a commit (taking the write lock, writing each touched page to the WAL once, ~10 pages for an audited
 * insert) is paid once per group rather than once per request.
 *
 * - The first top-level `sqlite.transaction(fn)()` of a turn runs `BEGIN IMMEDIATE` (the write lock, waiting up
 *   to busy_timeout for another process as before); its fn runs in it, and every later one of the turn as a
 *   SAVEPOINT (as better-sqlite3 nests a transaction in an open one): a transaction function that throws rolls
 *   back its own writes only, the others of the group stay.
 * - Nothing is committed to a caller before the group is: `settled()` is what a reply waits for (the HTTP layer
 *   holds every reply sent while a group is open until it settles, http/reply-release.ts), so a process that
 *   stops before the commit loses only requests it had not answered.
 * - A failed commit (or a group SQLite aborted) rolls the whole group back and rejects `settled()` of everyone in
 *   it with COMMIT_FAILED (503): no one is told their change was saved.
 * - The lock is held from the first write of a turn to the end of that turn only: synchronous work, never across
 *   an await, so another process waiting on it waits about as long as before.
 *
 * Writes outside a transaction function join an open group and autocommit when none is open, as before.
 */
export interface GroupCommit {
  /** Whether a group transaction is open now. */
  readonly open: boolean;
  /** How many groups were committed, and how many failed (tests, benchmarks). */
  readonly committed: number;
  readonly failed: number;
  /** Settles when the group open now is committed (rejects when it failed); undefined when none is open. */
  settled(): Promise<void> | undefined;
  /** Commits the open group now (before the connection closes). */
  flush(): void;
  /** Commits the open group and gives the connection back its own transaction(): each commits at once again. */
  stop(): void;
}

interface Group {
  done: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

const VARIANTS = ['default', 'deferred', 'immediate', 'exclusive'] as const;

/** The error everyone in a failed group gets: their change was not saved, and trying again is safe. */
export function commitFailed(cause: unknown): DomainError {
  const err = new DomainError('unavailable', 'The change could not be saved; try again', 'COMMIT_FAILED');
  (err as Error & { cause?: unknown }).cause = cause;
  return err;
}

/** The group commit of each connection that has one, for `committed()`. */
const groupsOf = new WeakMap<Database.Database, GroupCommit>();

/**
 * Settles when what the connection has written so far is committed: at once when no group is open, else with the
 * open group (rejecting with COMMIT_FAILED when it fails). An effect outside the database that announces a write
 * — a mail with a link to a token, a text with a code — waits for it, so that a failed group never leaves someone
 * holding a link to a row that is not there. Call it in the turn of the write (before any other await).
 */
export function committed(sqlite: Database.Database): Promise<void> {
  return groupsOf.get(sqlite)?.settled() ?? Promise.resolve();
}

type Variant = (typeof VARIANTS)[number];
/** better-sqlite3's transaction function and its variants (each one the others' property), as plain functions. */
type TransactionFns = Record<Variant, (this: unknown, ...args: unknown[]) => unknown>;

/** `onFailure` hears of each failed group once (the server logs it: every request in it was answered 503). */
export function groupCommits(sqlite: Database.Database, onFailure: (err: unknown) => void = () => {}): GroupCommit {
  // What stop() puts back: better-sqlite3's method (on the prototype) or whatever the connection had of its own.
  const previous = Object.getOwnPropertyDescriptor(sqlite, 'transaction');
  const ownTransaction = sqlite.transaction.bind(sqlite);
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const savepoint = sqlite.prepare('SAVEPOINT svc_group_member');
  const release = sqlite.prepare('RELEASE svc_group_member');
  const rollbackTo = sqlite.prepare('ROLLBACK TO svc_group_member');
  let current: Group | null = null;
  let committed = 0;
  let failed = 0;
  let stopped = false;

  const fail = (group: Group, cause: unknown) => {
    failed++;
    onFailure(cause);
    // Nobody may be waiting (a job's write): the rejection is handled here and passed on to those who are.
    group.done.catch(() => {});
    group.reject(commitFailed(cause));
  };

  const end = (group: Group) => {
    if (current !== group) return;
    current = null;
    if (!sqlite.inTransaction) {
      // SQLite rolled the whole transaction back (an I/O error, a full disk): the group's writes are gone.
      fail(group, new Error('the group transaction was rolled back'));
      return;
    }
    try {
      commit.run();
      committed++;
      group.resolve();
    } catch (err) {
      // A commit can fail and leave the transaction open (a deferred foreign key): nothing of it may stay.
      if (sqlite.inTransaction) rollback.run();
      fail(group, err);
    }
  };

  const open = (): Group => {
    // A group SQLite aborted earlier in this turn is failed now, before a new one starts.
    if (current) end(current);
    begin.run();
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const group: Group = { done, resolve, reject };
    current = group;
    nextTurn(() => end(group));
    return group;
  };

  /** The group's first transaction failed: it held nothing else, so it ends here, rolled back whole. */
  const discard = (group: Group) => {
    if (current !== group) return;
    current = null;
    if (sqlite.inTransaction) rollback.run();
    group.resolve();
  };

  /** fn as one more member of the open group, in a savepoint of its own (as better-sqlite3 runs a nested
   * transaction): when it throws, its own writes roll back and the group's stay. */
  const asMember = (fn: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown => {
    savepoint.run();
    try {
      const result = fn.apply(self, args);
      if (result instanceof Promise) throw new TypeError('Transaction function cannot return a promise');
      release.run();
      return result;
    } catch (err) {
      // SQLite may have rolled the whole transaction back itself (a full disk): then there is nothing to undo.
      if (sqlite.inTransaction) {
        rollbackTo.run();
        release.run();
      }
      throw err;
    }
  };

  const run = (fn: (...args: unknown[]) => unknown, variant: Variant, self: unknown, args: unknown[]): unknown => {
    if (stopped) return (ownTransaction(fn) as unknown as TransactionFns)[variant].apply(self, args);
    if (sqlite.inTransaction) return asMember(fn, self, args);
    // The first transaction of a group runs in the group's BEGIN itself, without a savepoint of its own (two
    // statements fewer when requests come one at a time): when it throws, the group holds nothing else yet.
    const group = open();
    try {
      const result = fn.apply(self, args);
      if (result instanceof Promise) throw new TypeError('Transaction function cannot return a promise');
      return result;
    } catch (err) {
      discard(group);
      throw err;
    }
  };

  // The same interface as better-sqlite3's transaction(fn): a function with its variants as properties. Made
  // without better-sqlite3's wrapper (which defines five read-only properties on each of four functions, ~10 µs a
  // call, paid by every write): every variant runs alike in a group (its BEGIN IMMEDIATE), and after stop() as
  // better-sqlite3 would.
  const grouped = function transaction(this: Database.Database, fn: (...args: unknown[]) => unknown) {
    if (typeof fn !== 'function') throw new TypeError('Expected first argument to be a function');
    const variants: TransactionFns & { database: Database.Database } = {
      default: function groupedTransaction(this: unknown, ...args: unknown[]) {
        return run(fn, 'default', this, args);
      },
      deferred: function groupedTransaction(this: unknown, ...args: unknown[]) {
        return run(fn, 'deferred', this, args);
      },
      immediate: function groupedTransaction(this: unknown, ...args: unknown[]) {
        return run(fn, 'immediate', this, args);
      },
      exclusive: function groupedTransaction(this: unknown, ...args: unknown[]) {
        return run(fn, 'exclusive', this, args);
      },
      database: sqlite,
    };
    for (const name of VARIANTS) Object.assign(variants[name], variants);
    return variants.default;
  };
  sqlite.transaction = grouped as unknown as Database.Database['transaction'];

  const commits: GroupCommit = {
    get open() {
      return current !== null;
    },
    get committed() {
      return committed;
    },
    get failed() {
      return failed;
    },
    settled: () => current?.done,
    flush: () => {
      if (current) end(current);
    },
    stop: () => {
      stopped = true;
      if (current) end(current);
      if (groupsOf.get(sqlite) === commits) groupsOf.delete(sqlite);
      if (Object.getOwnPropertyDescriptor(sqlite, 'transaction')?.value !== grouped) return;
      if (previous) Object.defineProperty(sqlite, 'transaction', previous);
      else Reflect.deleteProperty(sqlite, 'transaction');
    },
  };
  groupsOf.set(sqlite, commits);
  return commits;
}
