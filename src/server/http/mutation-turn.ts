import { setImmediate as nextTurn } from 'node:timers';
import type { GroupCommit } from '../db/group-commit.js';

/**
 * The mutations of a turn of the event loop run together, at its end (README, Architecture: "Writes are committed
 * in groups"). A POST, PUT, PATCH or DELETE of the API waits here before its handler starts (http/bind.ts): the
 * requests that arrive in one turn are read as they come, then at the turn's end (`setImmediate`) their handlers
 * run one after another, in the order they arrived, each stage of every one before the next (they resume in that
 * order at each await). So the turn's writes run back to back in one group transaction (db/group-commit.ts),
 * which then commits at once, after the last of them has gone as far as it can without waiting for I/O (Node runs
 * the microtasks between two immediates), rather than at the end of the next turn.
 *
 * Why: the same work costs much less CPU done in one stretch than interleaved with the HTTP work of the next
 * requests (SQLite's pages and B-tree code, the handlers' code, still in the processor's caches). A create-site
 * request under load cost ~140 µs of the server's CPU interleaved and ~91 µs batched (README "Benchmarks").
 * What it costs a request: the rest of the turn it arrived in (the reads and the reading of the turn's other
 * requests). Requests in flight together have no order between them: a client that needs one waits for an
 * answer before it sends the next request, as HTTP/1.1 clients do after a non-idempotent method (RFC 9112
 * §9.3.2).
 */
export function mutationTurns(commits: Pick<GroupCommit, 'flush'>): () => Promise<void> {
  let waiting: (() => void)[] | null = null;
  const start = () => {
    const turn = waiting ?? [];
    waiting = null;
    for (const go of turn) go();
  };
  return () =>
    new Promise<void>((resolve) => {
      if (waiting === null) {
        waiting = [];
        nextTurn(start);
        nextTurn(() => commits.flush());
      }
      waiting.push(resolve);
    });
}
