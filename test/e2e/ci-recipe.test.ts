import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, BIN, type E2eServer, filesUnder, startServer } from '../helpers/cli.js';

const README = path.join(import.meta.dirname, '..', '..', 'README.md');
const SHIMS = path.join(import.meta.dirname, '..', 'fixtures', 'ci-shims');
const TOTP_STEP_MS = 30_000;

/** The ```sh blocks of one README section, as written. */
function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`README has no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/**
 * The README's "Rotating keys in CI" run top to bottom in bash against a fresh server: the operator's part, then
 * the job with only what the operator put in the CI store. `svc` is the built CLI; `oathtool` and `gh` are
 * stand-ins (test/fixtures/ci-shims): the first computes the TOTP with otpauth, the second records what it was
 * given. `jq` and `openssl` are the machine's.
 */
describe('e2e: the README\'s CI key-rotation recipe runs as written', () => {
  let server: E2eServer;
  let dir: string;
  let bin: string;
  let store: string;

  beforeAll(async () => {
    server = await startServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ci-recipe-'));
    bin = path.join(dir, 'bin');
    store = path.join(dir, 'gh-store');
    fs.mkdirSync(bin);
    fs.mkdirSync(store);
    const shim = (name: string, script: string) => fs.writeFileSync(path.join(bin, name), `#!/bin/sh\nexec node '${script}' "$@"\n`, { mode: 0o755 });
    shim('svc', BIN);
    shim('oathtool', path.join(SHIMS, 'oathtool.mjs'));
    shim('gh', path.join(SHIMS, 'gh.mjs'));
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a block in bash as a fresh user (own HOME) with the given environment and the shims first on PATH. */
  async function runBlock(script: string, home: string, env: Record<string, string>) {
    fs.mkdirSync(home, { recursive: true });
    const result = await execa('bash', ['-c', script], {
      env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: home, LANG: 'C.UTF-8', CI: '1', GH_SHIM_DIR: store, ...env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 90_000,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  }

  const stored = (kind: 'secret' | 'variable', name: string) => fs.readFileSync(path.join(store, kind, name), 'utf8');

  async function orgsWithKey(key: string): Promise<number> {
    return (await fetch(`${server.url}/api/v1/orgs/`, { headers: { 'x-api-key': key } })).status;
  }

  it('01§4.1 the operator part, then the job, rotate the key: the new key works, the old one no longer does', { timeout: 200_000 }, async () => {
    const blocks = shellBlocks(fs.readFileSync(README, 'utf8'), 'Rotating keys in CI');
    expect(blocks).toHaveLength(2);
    const [operator = '', job = ''] = blocks;

    const setup = await runBlock(operator, path.join(dir, 'operator'), {
      SVC_BASE_URL: server.url,
      SVC_ADMIN_EMAIL: ADMIN.email,
      SVC_ADMIN_PASSWORD: ADMIN.password,
    });
    expect(setup.exitCode, setup.stderr).toBe(0);
    const firstKey = stored('secret', 'SVC_API_KEY');
    expect(firstKey).toMatch(/^svc_/);
    expect(await orgsWithKey(firstKey)).toBe(200);

    // The job signs in with the TOTP of the user whose MFA was just enabled: a code is accepted once, so the
    // job starts in the next 30-second step (a wait, as the README tells a job run right after set-up).
    await new Promise((resolve) => setTimeout(resolve, TOTP_STEP_MS - (Date.now() % TOTP_STEP_MS) + 500));

    const jobHome = path.join(dir, 'job');
    const run = await runBlock(job, jobHome, {
      SVC_EMAIL: stored('secret', 'SVC_EMAIL'),
      SVC_PASSWORD: stored('secret', 'SVC_PASSWORD'),
      SVC_TOTP_SECRET: stored('secret', 'SVC_TOTP_SECRET'),
      SVC_BASE_URL: stored('variable', 'SVC_BASE_URL'),
      KEY_ID: stored('variable', 'KEY_ID'),
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    const rotated = stored('secret', 'SVC_API_KEY');
    expect(rotated).toMatch(/^svc_/);
    expect(rotated).not.toBe(firstKey);
    expect(await orgsWithKey(rotated)).toBe(200);
    expect(await orgsWithKey(firstKey)).toBe(401);

    // The job wrote nothing to disk, and no secret travelled in gh's arguments.
    expect(filesUnder(jobHome)).toEqual([]);
    const argv = fs.readFileSync(path.join(store, 'calls.jsonl'), 'utf8');
    for (const secret of [firstKey, rotated, stored('secret', 'SVC_PASSWORD'), stored('secret', 'SVC_TOTP_SECRET')]) {
      expect(argv).not.toContain(secret);
    }
  });
});
