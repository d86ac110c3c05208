import type { FastifyInstance } from 'fastify';
import type { GroupCommit } from '../db/group-commit.js';

/**
 * No answer leaves before the writes it may report are committed (db/group-commit.ts): a reply sent while a group
 * transaction is open waits for its commit, whoever opened it (a read may have seen the group's writes too). When
 * the commit fails the reply becomes the error handler's 503 COMMIT_FAILED.
 *
 * The other replies of a turn of the event loop leave together at its end (`setImmediate`), as a group's replies
 * do after its commit: one socket write after another, not each between the next requests' work. On loopback
 * that took a third off the server's CPU per read in the routes benchmark (one site ~55 → ~36 µs, the agent's
 * poll ~50 → ~33): a write that wakes the client costs the kernel much more when the client has gone back to
 * sleep since the last one, and in a batch the client is still awake for all but the first. What it costs a
 * reply: the rest of the turn it was made in, the time the requests read with it take to run.
 */
export function installReplyRelease(app: FastifyInstance, commits: GroupCommit): void {
  let leaving: (() => void)[] | null = null;
  const sendAll = () => {
    const replies = leaving ?? [];
    leaving = null;
    for (const send of replies) {
      try {
        send();
      } catch (err) {
        // One reply's failure to go out must not keep the others of the turn.
        app.log.error({ err }, 'a reply could not be sent');
      }
    }
  };

  app.addHook('onSend', (_request, _reply, payload, done) => {
    const pending = commits.settled();
    if (pending !== undefined) {
      pending.then(
        () => done(null, payload),
        (err: Error) => done(err),
      );
      return;
    }
    if (leaving === null) {
      leaving = [];
      setImmediate(sendAll);
    }
    leaving.push(() => done(null, payload));
  });
}
