import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-zod-probe-'));
// zod sets this global when it loads; the probe reports it as the process exits, however it exits.
const probe = path.join(dir, 'probe.mjs');
fs.writeFileSync(
  probe,
  "process.on('exit', () => process.stderr.write(globalThis.__zod_globalConfig ? '\\nzod: loaded\\n' : '\\nzod: not loaded\\n'));\n",
);

/** Runs the CLI against a closed port (nothing is sent anywhere) and says whether it loaded zod. */
async function zodLoadedBy(args: string[]): Promise<boolean> {
  const result = await execa('node', ['--import', probe, BIN, ...args, '--base-url', 'http://127.0.0.1:9'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      SVC_TOKEN: 't',
    },
    extendEnv: false,
    reject: false,
    timeout: 20_000,
  });
  const verdict = /zod: (loaded|not loaded)/.exec(result.stderr)?.[1];
  expect(verdict, result.stderr).toBeDefined();
  return verdict === 'loaded';
}

/** Commands take the contract as data (src/client/endpoints.ts); scripts/bundle.js fails the build when a command's
 * static imports reach zod or src/contract. This checks the outcome in a real process. */
describe('commands start without zod', () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('svc orgs list -o json does not load zod', async () => {
    expect(await zodLoadedBy(['orgs', 'list', '-o', 'json', '--retries', '1'])).toBe(false);
  });

  it('svc orgs create --dry-run loads it to check the body (so the probe sees zod when it is there)', async () => {
    expect(await zodLoadedBy(['orgs', 'create', '--name', 'Contoso', '--slug', 'contoso', '--dry-run'])).toBe(true);
  });
});
