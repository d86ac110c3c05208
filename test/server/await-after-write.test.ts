import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// docs/api-notes.md, "Group commit" (5): a reply is held only while its group is open, so a function that writes
// and then awaits something (a mail, a signature, an outbound call) answers after the group has ended — with
// success even when the commit failed — unless it takes `committed()` in the turn of its write and awaits it.
// This finds every async function under src/server that awaits after a database write; each must take
// committed() itself or be listed below with the reason it needs none.

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A call that writes: a transaction, a drizzle insert/update/delete, a prepared statement run (`….run(`: reads are
 * `.get`/`.all`), or a helper that writes. */
const WRITE_CALL =
  /^(?:this\.db|db|tx|this\.db\.\$client|db\.\$client)\.(?:transaction|insert|update|delete)\(|\.run\($|^(?:transaction|recordAudit|publishEvent|enqueueJob|insertRow|updateRow|deleteById|deleteAudited|revokeSessionsOf|issueUserToken|replaceRecoveryCodes|deleteRecoveryCodes)\(/;

const NEEDS_NO_COMMITTED: Record<string, string> = {
  'src/server/http/idempotency.ts (anonymous)':
    'the key is claimed, the handler runs and its answer is stored in one turn, since no handler awaits after its write (this test)',
  'src/server/modules/identity/mfa-service.ts enable': 'its tokens come from SessionService.issue, which awaits the commit of the same turn',
  'src/server/modules/identity/mfa-service.ts verify': 'its tokens come from AuthService.startSession → SessionService.issue, which awaits the commit',
  'src/server/modules/identity/registration-service.ts registerUser': 'as verify: the session is issued in the turn of the write and awaits its commit',
  'src/server/modules/identity/registration-service.ts registerPartner': 'as verify: the session is issued in the turn of the write and awaits its commit',
  'src/server/modules/sso/login-service.ts signIn': 'as verify: the session is issued in the turn of the write and awaits its commit',
  'src/server/modules/identity/sessions.ts issue': 'accessFor takes committed() in the turn of the write before it signs',
  'src/server/modules/identity/sessions.ts refresh': 'accessFor takes committed() in the turn of the write before it signs',
  'src/server/modules/users/service.ts invite': 'deliverInvite takes committed() in the turn of the write before it mails',
  'src/server/modules/users/service.ts resendInvite': 'deliverInvite takes committed() in the turn of the write before it mails',
  'src/server/modules/integrations/service.ts saveChat': 'the write before the await is in a branch that returns; the await comes before the save',
  'src/server/modules/mobile/push.ts send': 'a job, not an answer; and the write before the await is in a branch that returns',
  'src/server/modules/notifications/pipeline.ts onTriggered': 'a job, not an answer: a failed commit runs the job again (at least once, 02 §6)',
  'src/server/modules/notifications/pipeline.ts escalate': 'a job, not an answer: a failed commit runs the job again (at least once, 02 §6)',
  'src/server/modules/psa/ticketing.ts onTriggered': 'a job, not an answer: a failed commit runs the job again (at least once)',
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `file function` of every async function that awaits after a write without taking committed() first. */
function awaitsAfterWrite(file: string, text = fs.readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword)) {
      let firstWrite = -1;
      const committedCalls: number[] = [];
      const awaits: ts.AwaitExpression[] = [];
      const inner = (child: ts.Node): void => {
        if (child !== node && ts.isFunctionLike(child)) return; // nested functions are visited on their own
        if (ts.isCallExpression(child)) {
          const callee = child.expression.getText(source);
          if (WRITE_CALL.test(`${callee}(`) && firstWrite < 0) firstWrite = child.getStart(source);
          if (callee === 'committed') committedCalls.push(child.getStart(source));
        }
        if (ts.isAwaitExpression(child)) awaits.push(child);
        ts.forEachChild(child, inner);
      };
      ts.forEachChild(node.body, inner);
      // An await after the first write is covered when committed() was taken after that write and before the
      // await ends (`await committed(…)` itself, or a promise taken earlier and awaited later).
      const uncovered = awaits.some(
        (a) => firstWrite >= 0 && a.getStart(source) > firstWrite && !committedCalls.some((c) => c > firstWrite && c < a.getEnd()),
      );
      const name = 'name' in node && node.name ? (node.name as ts.Node).getText(source) : '(anonymous)';
      if (uncovered) found.push(`${path.relative(ROOT, file)} ${name}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('no answer leaves after a failed commit (docs/api-notes.md, "Group commit" (5))', () => {
  const found = sourceFiles(path.join(ROOT, 'src/server')).flatMap((file) => awaitsAfterWrite(file));

  it('every async function that awaits after a database write takes committed() first, or says why it needs none', () => {
    expect(found.filter((entry) => !(entry in NEEDS_NO_COMMITTED))).toEqual([]);
  });

  it('the list of exceptions names only functions that still await after a write (none is stale)', () => {
    expect(Object.keys(NEEDS_NO_COMMITTED).filter((entry) => !found.includes(entry))).toEqual([]);
  });

  it('the check finds a function that writes and then awaits, and accepts one that takes committed() in between', () => {
    const sample = `class S {
      async bad() { this.db.$client.transaction(() => 1)(); await this.mailer.send(); }
      async good() { this.db.$client.transaction(() => 1)(); await committed(this.db.$client); await this.mailer.send(); }
      async taken() { this.db.insert(t).values({}).run(); const written = committed(this.db.$client); await sign(); await written; }
      async audited() { recordAudit(this.db, ctx, {}); await sign(); }
      async before() { await sign(); this.db.$client.transaction(() => 1)(); }
    }`;
    const names = awaitsAfterWrite(path.join(ROOT, 'src/server/sample.ts'), sample).map((entry) => entry.split(' ')[1]);
    expect(names).toEqual(['bad', 'audited']);
  });
});
