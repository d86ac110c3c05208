import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ANSI, cliUser, E2E_TIMEOUT_MS } from '../helpers/cli.js';

const REPO = path.join(import.meta.dirname, '..', '..');

describe('e2e: help topics and unknown commands (CLI.md "Scripting conveniences", "oclif pitfalls")', { timeout: E2E_TIMEOUT_MS }, () => {
  const user = cliUser();
  afterAll(() => user.cleanup());

  it.concurrent('bin/run.js runs as an executable through its shebang', async () => {
    const result = await execa(path.join(REPO, 'bin', 'run.js'), ['--version'], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^svc\/\d+\.\d+\.\d+ \S+ node-v\d+/);
  });

  // The issue's start-up rule: a command loads neither oclif nor server code; help still comes from oclif.
  it.concurrent('a command runs without loading oclif, conf or server code; --help on it is oclif help', async () => {
    const modulesLoadedBy = async (args: string[]) => {
      const log = path.join(user.home, `modules-${args.join('-')}.log`);
      const hooks = `import fs from 'node:fs';
        export async function resolve(specifier, context, next) {
          const result = await next(specifier, context);
          fs.appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
          return result;
        }`;
      const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
      const result = await execa('node', ['--import', `data:text/javascript,${encodeURIComponent(register)}`, path.join(REPO, 'bin', 'run.js'), ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: user.home, XDG_CONFIG_HOME: user.configDir, CI: '1' },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });
      expect(result.exitCode, result.stderr).toBe(0);
      return { stdout: String(result.stdout), modules: fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) };
    };
    // A profile on disk: reading it must not load conf, which only writes it.
    fs.mkdirSync(path.join(user.configDir, 'svc'), { recursive: true });
    const profile = { baseUrl: 'http://127.0.0.1:9', authKind: 'apiKey', storage: 'file' };
    fs.writeFileSync(path.join(user.configDir, 'svc', 'config.json'), JSON.stringify({ currentProfile: 'ci', profiles: { ci: profile } }));
    const command = await modulesLoadedBy(['profiles', 'list', '-o', 'json']);
    expect(JSON.parse(command.stdout)).toMatchObject([{ baseUrl: profile.baseUrl }]);
    expect(command.modules.some((url) => url.includes('/dist/commands/profiles/list.js'))).toBe(true);
    const heavy = ['/@oclif/', '/node_modules/conf/', '/dist/server/'];
    expect(command.modules.filter((url) => heavy.some((part) => url.includes(part)))).toEqual([]);

    const help = await modulesLoadedBy(['profiles', 'list', '--help']);
    expect(help.stdout).toContain('USAGE');
    expect(help.modules.some((url) => url.includes('/@oclif/core/'))).toBe(true);
  });

  it.concurrent('bin/run.js routes a topic to its help and an alias to its command', async () => {
    const topic = await user.run(['orgs']);
    expect(topic.exitCode).toBe(0);
    expect(topic.stdout).toContain('orgs list');
    // Nothing listens on port 9: both spellings reach the same command and fail the same way (exit 8).
    const direct = await user.run(['pam', 'active', '--base-url', 'http://127.0.0.1:9']);
    const alias = await user.run(['pam', 'requests', 'active', '--base-url', 'http://127.0.0.1:9']);
    expect(direct.exitCode).toBe(8);
    expect(direct.stderr).toContain('/api/v1/pam/active');
    // The time the tries took differs from run to run.
    const untimed = (r: typeof direct) => ({ ...r, stderr: r.stderr.replace(/tries in [\d.]+ s/, 'tries in … s') });
    expect(untimed(alias)).toEqual(untimed(direct));
    const afterDashes = await user.run(['orgs', 'list', '--', '--x']);
    expect(afterDashes.exitCode).toBe(2);
    expect(afterDashes.stderr).toContain('Unexpected argument: --x');
  });

  it.concurrent('CLI.md: svc help exit-codes prints the exit-code table, even off a terminal', async () => {
    const result = await user.run(['help', 'exit-codes']);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]?.split(/\s+/)).toEqual(['code', 'meaning']);
    expect(lines.slice(1).map((l) => Number(l.split(/\s+/)[0]))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130]);
    expect(result.stdout).toMatch(/^3\s+authentication failed/m);
    const json = await user.json(['help', 'exit-codes']);
    expect(json).toHaveLength(11);
    // issue 9 item 6: Ctrl-C has a code of its own
    expect(result.stdout).toMatch(/^130\s+interrupted/m);
  });

  it.concurrent('CLI.md: svc help environment lists every variable of the CLI and of the server configuration', async () => {
    const names = (await user.json(['help', 'environment'])).map((v: { name: string }) => v.name);
    for (const name of ['SVC_PROFILE', 'SVC_BASE_URL', 'SVC_API_KEY', 'SVC_TOKEN', 'NO_COLOR', 'CI']) expect(names).toContain(name);
    // Every variable the server's zod-parsed environment reads (src/server/config.ts) is documented.
    const source = fs.readFileSync(path.join(REPO, 'src', 'server', 'config.ts'), 'utf8');
    const block = /const EnvSchema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(source)?.[1] ?? '';
    const serverVars = [...block.matchAll(/^\s{2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]);
    expect(serverVars.length).toBeGreaterThan(10);
    expect(serverVars.filter((name) => !names.includes(name))).toEqual([]);
  });

  it.concurrent('an unknown command suggests the closest one and exits 2 without running anything', async () => {
    const typo = await user.run(['orgs', 'lst']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('Did you mean `svc orgs list`?');
    expect(typo.stdout).toBe('');
    const topic = await user.run(['partner', 'list']);
    expect(topic.exitCode).toBe(2);
    expect(topic.stderr).toContain('Did you mean `svc partners list`?');
    const withArgs = await user.run(['sites', 'gte', '3b9e']);
    expect(withArgs.stderr).toContain('Did you mean `svc sites get`?');
    const underTopic = await user.run(['orgs', 'sites', 'create', '--name', 'x']);
    expect(underTopic.exitCode).toBe(2);
    expect(underTopic.stderr).toContain('Did you mean `svc sites create`?');
    const nonsense = await user.run(['zzzzzzzz']);
    expect(nonsense.exitCode).toBe(2);
    expect(nonsense.stderr).not.toContain('Did you mean');
  });

  it.concurrent('an unknown flag names the flag it probably meant and exits 2 without calling anything', async () => {
    const part = await user.run(['sites', 'list', '--url', 'http://127.0.0.1:9']);
    expect(part.exitCode).toBe(2);
    expect(part.stderr).toContain('Nonexistent flag: --url\nDid you mean --base-url?\nSee more help with --help');
    expect(part.stdout).toBe('');
    const typo = await user.run(['sites', 'list', '--ouptut=csv']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('Did you mean --output?');
    const nonsense = await user.run(['sites', 'list', '--zzzzzz']);
    expect(nonsense.exitCode).toBe(2);
    expect(nonsense.stderr).not.toContain('Did you mean');
  });

  it.concurrent('CLI.md output: NO_COLOR keeps help free of ANSI escapes', async () => {
    const result = await user.run(['--help'], { env: { NO_COLOR: '1', CI: '' } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('TOPICS');
    expect(result.stdout + result.stderr).not.toMatch(ANSI);
  });
});
