import type { FastifyInstance } from 'fastify';
import type { GroupCommit } from '../db/group-commit.js';

/**
 * No answer leaves before the writes it may report are committed (db/group-commit.ts): a reply sent while a group
 * transaction is open waits for its commit, whoever opened it (a read may have seen the group's writes too). When
 * the commit fails the reply becomes the error handler's 503 COMMIT_FAILED. With no group open (every reply of an
 * idle server, and every read between writes) the hook calls on at once.
 */
export function installCommitBarrier(app: FastifyInstance, commits: GroupCommit): void {
  app.addHook('onSend', (_request, _reply, payload, done) => {
    const pending = commits.settled();
    if (pending === undefined) {
      done(null, payload);
      return;
    }
    pending.then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });
}
