import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  adminToken,
  BIN,
  cliUser,
  type CliUser,
  E2E_TIMEOUT_MS,
  type E2eServer,
  login,
  startServer,
} from '../helpers/cli.js';
import { createTenant, enroll, ok, type Tenant } from '../helpers/fixtures.js';
import { enableMfa } from '../helpers/mfa.js';

const sha = (value: string) => createHash('sha256').update(value).digest('hex');
/** The executable the auto-approve rule matches, and one nothing matches. */
const H_AUTO = sha('vendor-installer.exe');
const H_OTHER = sha('unknown-tool.exe');
/** Requests the auto-approve rule decides: each records `requested` and `auto_approved`. */
const AUTO_REQUESTS = 150;

interface Agent {
  agentId: string;
  token: string;
  deviceId: string;
}

/** A test's own organization, with one enrolled agent and an auto-approve rule file (not yet created). */
interface PamWorld extends Tenant {
  agent: Agent;
  ruleFile: string;
}

/** An agent's elevation request (04 wire notes "Agent ingest"), over plain HTTP with the agent token. */
async function ingest(
  url: string,
  agent: Agent,
  body: Record<string, unknown>,
): Promise<{ id: string; status: string }> {
  const res = await fetch(`${url}/api/v1/agents/${agent.agentId}/elevation-requests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { id: string; status: string };
  if (res.status !== 201) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

const uac = (hash: string, n: number) => ({
  subject_username: 'CORP\\alice',
  target_executable_path: `C:\\Tools\\app-${n}.exe`,
  target_executable_hash: hash,
  target_executable_signer: 'Vendor Inc',
  command_line: `app-${n}.exe --install`,
});

describe('e2e: svc pam (01 §4.9; CLI.md "Safety", "The audit export")', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let admin: CliUser;
  let token: string;
  const started = new Date(Date.now() - 60_000).toISOString();

  /**
   * Each test's own organization: an enrollment key made through the API (it takes the administrator's session
   * with MFA, so through the CLI), an agent that enrolls with it over plain HTTP, and the YAML of an auto-approve
   * rule for its executable.
   */
  const world = async (): Promise<PamWorld> => {
    const tenant = await createTenant(server.url, token, 'pam');
    const key = await admin.json(['api', 'POST', '/enrollment-keys', '--input', '-'], {
      input: JSON.stringify({ orgId: tenant.orgId, siteId: tenant.siteId, name: 'pam agents' }),
    });
    const enrolled = await ok(enroll(server.url, key.key, 'ws-pam-01', 'windows'), 'enroll');
    const ruleFile = path.join(admin.home, `${tenant.slug}-rule.yaml`);
    fs.writeFileSync(
      ruleFile,
      [
        `orgId: ${tenant.orgId}`,
        'name: Vendor installer',
        'verdict: auto_approve',
        'priority: 10',
        `matchHash: ${H_AUTO}`,
        'approvalDurationMinutes: 30',
        'matchUser: CORP\\alice',
        '',
      ].join('\n'),
    );
    return {
      ...tenant,
      agent: { agentId: enrolled.agentId, token: enrolled.authToken, deviceId: enrolled.deviceId },
      ruleFile,
    };
  };
  /** The world's rule, created from its file. */
  const createRule = async (w: PamWorld): Promise<string> =>
    (await admin.json<{ id: string }>(['pam', 'rules', 'create', '--from-file', w.ruleFile])).id;
  /** A world whose rule has auto-approved AUTO_REQUESTS requests of its agent. */
  const withAutoApproved = async () => {
    const w = await world();
    const ruleId = await createRule(w);
    for (let i = 0; i < AUTO_REQUESTS; i += 15) {
      const batch = await Promise.all(
        Array.from({ length: 15 }, (_, j) => ingest(server.url, w.agent, uac(H_AUTO, i + j))),
      );
      for (const answer of batch) expect(answer.status).toBe('auto_approved');
    }
    return { ...w, ruleId };
  };
  /** A request no rule matches, left pending. */
  const pendingRequest = async (w: PamWorld, n: number) => (await ingest(server.url, w.agent, uac(H_OTHER, n))).id;
  /** A pending request approved by hand (`--yes`). */
  const approvedRequest = async (w: PamWorld, n: number) => {
    const id = await pendingRequest(w, n);
    await admin.json(['pam', 'requests', 'approve', id, '--yes']);
    return id;
  };

  beforeAll(async () => {
    // Rows are exportable at once: no settle delay.
    server = await startServer({ SVC_EXPORT_SETTLE_SECONDS: '0' });
    admin = cliUser();
    token = await adminToken(server.url);
    const signedIn = await login(admin, server.url);
    if (signedIn.exitCode !== 0) throw new Error(signedIn.stderr);
    await enableMfa(admin);
  }, E2E_TIMEOUT_MS);
  afterAll(async () => {
    admin?.cleanup();
    await server?.stop();
  });

  it('01§4.9 rules create --from-file (YAML), list, update, get', async () => {
    const { orgId, ruleFile } = await world();
    const created = await admin.json(['pam', 'rules', 'create', '--from-file', ruleFile]);
    expect(created).toMatchObject({
      orgId,
      name: 'Vendor installer',
      verdict: 'auto_approve',
      priority: 10,
      enabled: true,
      matchHash: H_AUTO,
      matchUser: 'CORP\\alice',
      approvalDurationMinutes: 30,
    });
    const ruleId: string = created.id;
    const listed = await admin.json(['pam', 'rules', 'list', '--org-id', orgId]);
    expect(listed.map((r: { id: string }) => r.id)).toEqual([ruleId]);
    const updated = await admin.json([
      'pam',
      'rules',
      'update',
      ruleId,
      '--name',
      'Vendor installer (signed)',
      '--priority',
      '5',
      '--match-user',
      'null',
    ]);
    expect(updated).toMatchObject({
      id: ruleId,
      name: 'Vendor installer (signed)',
      priority: 5,
      matchUser: null,
      verdict: 'auto_approve',
    });
    expect(await admin.json(['pam', 'rules', 'get', ruleId])).toEqual(updated);
    // Input the contract refuses is a usage error (exit 2); a rule shape the server refuses is a 400
    // business-rule refusal (exit 6, CLI.md), with the spec's code.
    const createInOrg = (...flags: string[]) => admin.run(['pam', 'rules', 'create', '--org-id', orgId, ...flags]);
    const badHash = await createInOrg('--name', 'x', '--match-hash', 'not-hex');
    expect(badHash.exitCode).toBe(2);
    expect(badHash.stderr).toContain('matchHash');
    const windowOnly = await createInOrg('--name', 'window only', '--time-window', '{"start":"08:00","end":"18:00"}');
    expect(windowOnly.exitCode).toBe(6);
    expect(windowOnly.stderr).toContain('PAM_RULE_NO_CRITERIA');
    // Re-approval turns auto-approval back on: it confirms, and a rule that was never suspended is refused.
    expect((await admin.run(['pam', 'rules', 'reapprove', ruleId])).exitCode).toBe(2);
    const notSuspended = await admin.run(['pam', 'rules', 'reapprove', ruleId, '--yes']);
    expect(notSuspended.exitCode).toBe(6);
    expect(notSuspended.stderr).toContain('PAM_RULE_NOT_SUSPENDED');
    expect(await admin.json(['pam', 'rules', 'reapprove', ruleId, '--dry-run'])).toMatchObject({
      dryRun: true,
      method: 'PATCH',
      body: { reapprove: true },
    });
  });

  it('01§4.9 agents ingest: the rule auto-approves matching requests; preview counts them', async () => {
    // withAutoApproved checks that each of the rule's requests is answered auto_approved.
    const { ruleFile } = await withAutoApproved();
    const preview = await admin.json([
      'pam',
      'rules',
      'preview',
      '--from-file',
      ruleFile,
      '--match-user',
      'null',
      '--window-days',
      '1',
    ]);
    expect(preview).toMatchObject({ totalMatched: AUTO_REQUESTS, windowDays: 1 });
    expect(preview.sample.length).toBeGreaterThan(0);
  });

  it('01§4.9 requests list with filters; approve refuses without --yes off a terminal (exit 2); --yes approves', async () => {
    const w = await withAutoApproved();
    const pendingId = await pendingRequest(w, 1000);
    const pending = await admin.json([
      'pam',
      'requests',
      'list',
      '--status',
      'pending',
      '--device-id',
      w.agent.deviceId,
    ]);
    expect(pending.map((r: { id: string }) => r.id)).toEqual([pendingId]);
    expect(pending[0]).toMatchObject({
      status: 'pending',
      flowType: 'uac_intercept',
      deviceHostname: 'ws-pam-01',
      targetExecutableHash: H_OTHER,
    });
    const all = await admin.json([
      'pam',
      'requests',
      'list',
      '--all',
      '--device-id',
      w.agent.deviceId,
      '--flow-type',
      'uac_intercept',
      '--from',
      started,
    ]);
    expect(all).toHaveLength(AUTO_REQUESTS + 1);

    const refused = await admin.run(['pam', 'requests', 'approve', pendingId]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(refused.stdout).toBe('');
    expect((await admin.json(['pam', 'requests', 'get', pendingId])).status).toBe('pending');

    const approved = await admin.json([
      'pam',
      'requests',
      'approve',
      pendingId,
      '--yes',
      '--duration-minutes',
      '20',
      '--reason',
      'Ticket 4711',
    ]);
    expect(approved).toMatchObject({ id: pendingId, status: 'approved', enforcementStatus: 'pending_dispatch' });
    expect(await admin.json(['pam', 'requests', 'get', pendingId])).toMatchObject({
      status: 'approved',
      decisionSource: 'human',
    });
    expect((await admin.json(['pam', 'active', '--org-id', w.orgId])).map((r: { id: string }) => r.id)).toContain(
      pendingId,
    );
    // Not pending any more: exit 6.
    expect((await admin.run(['pam', 'requests', 'deny', pendingId, '--reason', 'late'])).exitCode).toBe(6);
  });

  it('01§4.9 deny, and revoke (refused without --yes; --reason required)', async () => {
    const w = await world();
    const approvedId = await approvedRequest(w, 1000);
    const other = await pendingRequest(w, 1001);
    expect(await admin.json(['pam', 'requests', 'deny', other, '--reason', 'Not on the list'])).toMatchObject({
      id: other,
      status: 'denied',
    });
    expect((await admin.run(['pam', 'requests', 'revoke', approvedId, '--reason', 'done'])).exitCode).toBe(2);
    expect((await admin.run(['pam', 'requests', 'revoke', approvedId, '--yes'])).exitCode).toBe(2);
    expect(
      await admin.json(['pam', 'requests', 'revoke', approvedId, '--reason', 'Work finished', '--yes']),
    ).toMatchObject({ id: approvedId, status: 'revoked', enforcementStatus: 'cleanup_pending' });
  });

  it('01§4.9 a critical-tier approval without the password and without a terminal exits 3 naming --reauth-password-stdin; with it, approved', async () => {
    const { agent } = await world();
    const critical = (
      await ingest(server.url, agent, {
        subject_username: 'CORP\\alice',
        tool_name: 'execute_command',
        risk_tier: 4,
        action_digest: sha('rm -rf'),
        target_executable_path: 'C:\\Windows\\System32\\cmd.exe',
      })
    ).id;
    const missing = await admin.run(['pam', 'requests', 'approve', critical, '--yes']);
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toContain('reauth_required');
    expect(missing.stderr).toContain('--reauth-password-stdin');
    const wrong = await admin.run(['pam', 'requests', 'approve', critical, '--yes', '--reauth-password-stdin'], {
      input: 'not-the-password',
    });
    expect(wrong.exitCode).toBe(3);
    const approved = await admin.run(
      ['pam', 'requests', 'approve', critical, '--yes', '--reauth-password-stdin', '--output', 'json'],
      { input: `${ADMIN.password}\n` },
    );
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ id: critical, status: 'approved' });
    expect((await admin.json(['pam', 'requests', 'get', critical])).decidedAssuranceLevel).toBe('reauth');
  });

  it('01§4.9 config, config update; signer groups create, list, get, update, delete', async () => {
    const { orgId } = await world();
    expect(await admin.json(['pam', 'config', '--org-id', orgId])).toMatchObject({
      orgId,
      defaultUnmatchedVerdict: 'require_approval',
    });
    expect(
      await admin.json(['pam', 'config', 'update', '--org-id', orgId, '--default-approval-duration-minutes', '45']),
    ).toMatchObject({
      defaultUnmatchedVerdict: 'require_approval',
      defaultApprovalDurationMinutes: 45,
    });
    const group = await admin.json([
      'pam',
      'signer-groups',
      'create',
      '--org-id',
      orgId,
      '--name',
      'Trusted',
      '--signers',
      'Vendor Inc,Other Corp',
      '--thumbprints',
      H_OTHER,
    ]);
    expect(group).toMatchObject({ name: 'Trusted', signers: ['Vendor Inc', 'Other Corp'], thumbprints: [H_OTHER] });
    expect(
      (await admin.json(['pam', 'signer-groups', 'list', '--org-id', orgId])).map((g: { id: string }) => g.id),
    ).toEqual([group.id]);
    expect(await admin.json(['pam', 'signer-groups', 'update', group.id, '--signers', 'Vendor Inc'])).toMatchObject({
      signers: ['Vendor Inc'],
    });
    expect((await admin.json(['pam', 'signer-groups', 'get', group.id])).signers).toEqual(['Vendor Inc']);
    expect((await admin.run(['pam', 'signer-groups', 'delete', group.id])).exitCode).toBe(2);
    expect((await admin.run(['pam', 'signer-groups', 'delete', group.id, '--yes'])).exitCode).toBe(0);
    expect(await admin.json(['pam', 'signer-groups', 'list', '--org-id', orgId])).toEqual([]);
  });

  describe('svc pam export', () => {
    /**
     * One organization's events, which no test of this block changes (an export only reads): the rule's
     * requests (requested + auto_approved each) and requests decided by hand (approved then revoked, denied,
     * approved), all before `to`; `reference` is the whole window exported to a file, and `rows` its row count.
     */
    let w: PamWorld;
    let to = '';
    let reference = '';
    let rows = 0;
    /** `svc pam export` of the organization over [started, until), to stdout or with --out. */
    const exportArgs = (until = to) => ['pam', 'export', '--org-id', w.orgId, '--from', started, '--to', until];
    const exportTo = (file: string) => admin.run([...exportArgs(), '--out', file, '--output', 'json']);

    beforeAll(async () => {
      w = await withAutoApproved();
      // One CLI process at a time: they share the administrator's profile.
      const revoked = await approvedRequest(w, 1000);
      await approvedRequest(w, 1001);
      const denied = await pendingRequest(w, 1002);
      await admin.json(['pam', 'requests', 'revoke', revoked, '--reason', 'Work finished', '--yes']);
      await admin.json(['pam', 'requests', 'deny', denied, '--reason', 'Not on the list']);
      await new Promise((resolve) => setTimeout(resolve, 20));
      to = new Date().toISOString();
      reference = path.join(admin.home, `${w.slug}-reference.csv`);
      const result = await exportTo(reference);
      if (result.exitCode !== 0) throw new Error(`the reference export exited ${result.exitCode}:\n${result.stderr}`);
      rows = JSON.parse(result.stdout).rows;
    }, E2E_TIMEOUT_MS);

    it('CLI.md audit export: --out FILE over a few hundred events, header once, checkpoint removed', async () => {
      const full = path.join(admin.home, `${w.slug}-full.csv`);
      const result = await exportTo(full);
      expect(result.exitCode, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout);
      // requested + auto_approved per rule-decided request, and the events of the requests decided by hand.
      expect(summary.rows).toBeGreaterThanOrEqual(2 * AUTO_REQUESTS + 6);
      expect(summary).toMatchObject({ out: full, complete: true, pages: 1 });
      const text = fs.readFileSync(full, 'utf8');
      expect(text.startsWith('id,org_id,elevation_request_id,event_type,')).toBe(true);
      expect(text.match(/^id,org_id,/gm)).toHaveLength(1);
      expect(fs.existsSync(`${full}.cursor`)).toBe(false);
      // To stdout with small pages: the same bytes.
      const streamed = await admin.run([...exportArgs(), '--limit', '50']);
      expect(streamed.exitCode).toBe(0);
      expect(`${streamed.stdout}\n`).toBe(text);
    });

    it('CLI.md audit export: interrupted (SIGINT after the first checkpoint): file at its checkpoint, same row count; --resume is byte-identical', async () => {
      const target = path.join(admin.home, `${w.slug}-interrupted.csv`);
      const checkpoint = `${target}.cursor`;
      const child = execa('node', [BIN, ...exportArgs(), '--limit', '1', '--out', target], {
        env: {
          PATH: process.env.PATH ?? '',
          LANG: 'C.UTF-8',
          HOME: admin.home,
          XDG_CONFIG_HOME: admin.configDir,
          XDG_DATA_HOME: path.join(admin.home, '.local', 'share'),
          XDG_CACHE_HOME: path.join(admin.home, '.cache'),
          CI: '1',
        },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        timeout: 30_000,
      });
      let pages = 0;
      for (let waited = 0; pages < 3 && waited < 20_000; waited += 5) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        try {
          pages = JSON.parse(fs.readFileSync(checkpoint, 'utf8')).pages;
        } catch {
          // not written yet, or being replaced
        }
      }
      child.kill('SIGINT');
      const interrupted = await child;
      expect(interrupted.exitCode).toBe(130);
      expect(String(interrupted.stderr)).toContain('--resume');
      const saved = JSON.parse(fs.readFileSync(checkpoint, 'utf8'));
      expect(saved.pages).toBeGreaterThanOrEqual(3);
      expect(saved.rows).toBeLessThan(rows);
      // Nothing half-written: the file ends at its checkpoint, and the message counts the checkpoint's rows.
      expect(fs.statSync(target).size).toBe(saved.bytes);
      expect(String(interrupted.stderr)).toMatch(
        new RegExp(`Interrupted after ${saved.rows} rows? in ${saved.pages} pages?`),
      );

      const mismatch = await admin.run([...exportArgs(), '--event-type', 'approved', '--out', target, '--resume']);
      expect(mismatch.exitCode).toBe(2);
      const restart = await admin.run([...exportArgs(), '--out', target]);
      expect(restart.exitCode).toBe(2);

      const resumed = await admin.run([
        ...exportArgs(),
        '--limit',
        '7',
        '--out',
        target,
        '--resume',
        '--output',
        'json',
      ]);
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ rows, complete: true, resumed: true });
      expect(fs.readFileSync(target).equals(fs.readFileSync(reference))).toBe(true);
      expect(fs.existsSync(checkpoint)).toBe(false);
    });

    it('CLI.md audit export: a window reaching past the settle watermark exits 9; --allow-incomplete exits 0', async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const incomplete = await admin.run([...exportArgs(future), '--format', 'jsonl']);
      expect(incomplete.exitCode).toBe(9);
      expect(incomplete.stdout.split('\n').length).toBeGreaterThanOrEqual(rows);
      const allowed = await admin.run([...exportArgs(future), '--format', 'jsonl', '--allow-incomplete']);
      expect(allowed.exitCode).toBe(0);
    });
  });

  it('01§4.9 rules delete refuses without --yes (exit 2); --yes deletes', async () => {
    const w = await world();
    const ruleId = await createRule(w);
    expect((await admin.run(['pam', 'rules', 'delete', ruleId])).exitCode).toBe(2);
    expect(await admin.json(['pam', 'rules', 'delete', ruleId, '--yes'])).toMatchObject({ id: ruleId, success: true });
    expect(await admin.json(['pam', 'rules', 'list', '--org-id', w.orgId])).toEqual([]);
    expect((await admin.run(['pam', 'rules', 'get', ruleId])).exitCode).toBe(5);
  });
});
