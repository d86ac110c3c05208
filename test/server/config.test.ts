import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import net from 'node:net';
import { auth } from '../../src/contract/auth.js';
import { UserInviteSchema } from '../../src/contract/users.js';
import { buildApp } from '../../src/server/app.js';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { DEFAULT_ADMIN_EMAIL } from '../../src/server/modules/identity/first-start.js';
import { initDataDir } from '../../src/server/ops/init.js';
import { loadServerSecrets } from '../../src/server/security/server-secrets.js';
import { startServer, type RunningServer } from '../../src/server/server.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/run.js');
const mode = (file: string) => fs.statSync(file).mode & 0o777;

const ENV_SECRETS = {
  SVC_JWT_SECRET: 'j'.repeat(40),
  SVC_ENCRYPTION_KEY: 'ab'.repeat(32),
  SVC_ENROLLMENT_PEPPER: 'p'.repeat(40),
};

describe('server configuration', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** The env of a `svc` child process: isolated HOME and XDG dirs, nothing inherited but PATH. */
  const cliEnv = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    HOME: root,
    XDG_CONFIG_HOME: path.join(root, 'config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    SVC_LOG_LEVEL: 'warn',
    ...extra,
  });

  it('defaults: 127.0.0.1, port 3000, data in the XDG data dir', () => {
    vi.stubEnv('XDG_DATA_HOME', path.join(root, 'xdg'));
    const config = loadConfig({});
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(3000);
    expect(config.dataDir).toBe(path.join(root, 'xdg', 'svc'));
    expect(config.databaseFile).toBe(path.join(root, 'xdg', 'svc', 'svc.db'));
  });

  it('flags override the environment', () => {
    const config = loadConfig(
      { PORT: '4000', HOST: '0.0.0.0', SVC_DATA_DIR: '/env' },
      { port: 5000, host: '::1', dataDir: '/flag' },
    );
    expect(config).toMatchObject({ port: 5000, host: '::1', dataDir: '/flag' });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ENABLE_2FA', 'maybe'],
    ['SVC_ENCRYPTION_KEY', 'short'],
    ['SVC_ADMIN_EMAIL', 'not-an-email'],
    ['SVC_LOG_LEVEL', 'loud'],
  ])('a bad %s (%s) fails with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}: `));
  });

  it('every bad variable is named at once', () => {
    expect(() => loadConfig({ PORT: 'abc', ENABLE_2FA: 'maybe' })).toThrow(/PORT: [\s\S]*ENABLE_2FA: /);
  });

  it.each([
    ['PORT', 'abc'],
    ['ENABLE_2FA', 'maybe'],
    ['SVC_ENCRYPTION_KEY', 'short'],
  ])('`svc server start` with a bad %s exits 2 naming it on stderr', async (name, value) => {
    const result = await execa('node', [BIN, 'server', 'start'], {
      env: cliEnv({ SVC_DATA_DIR: path.join(root, 'data'), [name]: value }),
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${name}: `);
    expect(result.stdout).toBe('');
    // Nothing was created for a configuration that does not parse.
    expect(fs.existsSync(path.join(root, 'data'))).toBe(false);
  });

  describe('server keys and the data dir', () => {
    let server: RunningServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('first start creates the data dir 0700 and the keys file 0600', async () => {
      const dataDir = path.join(root, 'nested', 'data');
      server = await startServer(
        loadConfig({ SVC_DATA_DIR: dataDir, PORT: '0', SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!' }),
        { logger: false, handleSignals: false, announce: () => {} },
      );
      expect(mode(dataDir)).toBe(0o700);
      const secretsFile = path.join(dataDir, 'secrets.json');
      expect(mode(secretsFile)).toBe(0o600);
      const stored = JSON.parse(fs.readFileSync(secretsFile, 'utf8'));
      expect(stored.jwtSecret.length).toBeGreaterThanOrEqual(32);
      expect(stored.encryptionKey).toMatch(/^[0-9a-f]{64}$/);
      expect(stored.enrollmentPepper.length).toBeGreaterThanOrEqual(32);

      // A restart reads the same keys instead of generating new ones.
      await server.close();
      server = await startServer(loadConfig({ SVC_DATA_DIR: dataDir, PORT: '0' }), {
        logger: false,
        handleSignals: false,
        announce: () => {},
      });
      expect(JSON.parse(fs.readFileSync(secretsFile, 'utf8'))).toEqual(stored);
    });

    it('keys given by the environment are used and nothing is generated', async () => {
      const dataDir = path.join(root, 'data');
      expect(
        loadServerSecrets(dataDir, {
          jwtSecret: ENV_SECRETS.SVC_JWT_SECRET,
          encryptionKey: ENV_SECRETS.SVC_ENCRYPTION_KEY,
          enrollmentPepper: ENV_SECRETS.SVC_ENROLLMENT_PEPPER,
        }),
      ).toEqual({
        jwtSecret: ENV_SECRETS.SVC_JWT_SECRET,
        encryptionKey: ENV_SECRETS.SVC_ENCRYPTION_KEY,
        enrollmentPepper: ENV_SECRETS.SVC_ENROLLMENT_PEPPER,
      });
      expect(fs.existsSync(dataDir)).toBe(false);

      server = await startServer(
        loadConfig({
          SVC_DATA_DIR: dataDir,
          PORT: '0',
          SVC_ADMIN_EMAIL: 'admin@example.test',
          SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
          ...ENV_SECRETS,
        }),
        {
          logger: false,
          handleSignals: false,
          announce: () => {},
        },
      );
      expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
      // The data dir holds the database (password hashes): private even when no keys file is written.
      expect(mode(dataDir)).toBe(0o700);
      const res = await fetch(`${server.address}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@example.test', password: 'Admin-Passw0rd!' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { tokens: { accessToken: string } };
      const { payload } = await jwtVerify(
        body.tokens.accessToken,
        new TextEncoder().encode(ENV_SECRETS.SVC_JWT_SECRET),
      );
      expect(payload.iss).toBe('svc');
    });

    it('`svc server init` creates the same data dir without serving, and is idempotent', async () => {
      const dataDir = path.join(root, 'init');
      const announced: string[] = [];
      const first = await initDataDir(loadConfig({ SVC_DATA_DIR: dataDir }), (m) => announced.push(m));
      expect(first.created).toEqual({ dataDir: true, secrets: true, database: true, administrator: true });
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(path.join(dataDir, 'secrets.json'))).toBe(0o600);
      expect(announced.join('\n')).toMatch(/password: \S{20,}/);
      const second = await initDataDir(loadConfig({ SVC_DATA_DIR: dataDir }), (m) => announced.push(m));
      expect(second.created).toEqual({ dataDir: false, secrets: false, database: false, administrator: false });
      expect(second.applied).toBe(0);
      expect(announced).toHaveLength(1);
    });
  });

  describe('the generated administrator password', () => {
    const running: ResultPromise[] = [];
    afterEach(async () => {
      for (const child of running.splice(0)) {
        child.kill('SIGKILL');
        await child.catch(() => undefined);
      }
    });

    /** Runs `svc server start` until it listens, then stops it with SIGTERM; returns its stderr and exit code. */
    async function startAndStop(dataDir: string): Promise<{ stderr: string; exitCode: number | undefined }> {
      const child = execa('node', [BIN, 'server', 'start', '--port', '0'], {
        env: cliEnv({ SVC_DATA_DIR: dataDir }),
        extendEnv: false,
        reject: false,
        timeout: 20_000,
      });
      running.push(child);
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/listening on http/.test(stderr)) resolve();
        });
        void child.then(() => reject(new Error(`server exited early: ${stderr}`)));
      });
      child.kill('SIGTERM');
      const result = await child;
      return { stderr: result.stderr, exitCode: result.exitCode };
    }

    it('is printed once to stderr on first start and not on the next', async () => {
      const dataDir = path.join(root, 'data');
      const first = await startAndStop(dataDir);
      expect(first.exitCode).toBe(0);
      const match = /password: (\S+)/.exec(first.stderr);
      expect(match?.[1]).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(first.stderr.split(match?.[1] ?? '').length - 1).toBe(1);
      expect(first.stderr).toContain('admin@svc.localhost');

      const second = await startAndStop(dataDir);
      expect(second.exitCode).toBe(0);
      expect(second.stderr).not.toContain('password:');
      expect(second.stderr).not.toContain(match?.[1]);
    }, 60_000);
  });

  describe('issue 9: the administrator and the address, before anything is written', () => {
    it('the default administrator address is one the users and login contracts accept; SVC_ADMIN_EMAIL the users contract refuses stops the start', () => {
      const roleId = '00000000-0000-4000-8000-000000000000';
      expect(UserInviteSchema.safeParse({ email: DEFAULT_ADMIN_EMAIL, name: 'Admin', roleId }).success).toBe(true);
      expect(UserInviteSchema.safeParse({ email: 'admin@localhost', name: 'Admin', roleId }).success).toBe(false);
      expect(auth.login.body.safeParse({ email: DEFAULT_ADMIN_EMAIL, password: 'x' }).success).toBe(true);
      for (const email of ['admin@localhost', 'a@b', 'x'.repeat(250) + '@example.com']) {
        expect(() => loadConfig({ SVC_ADMIN_EMAIL: email })).toThrow(/SVC_ADMIN_EMAIL: /);
      }
    });

    it('the generated administrator signs in with the printed password; an address an older svc created (admin@localhost) still can', async () => {
      const dataDir = path.join(root, 'data');
      const announced: string[] = [];
      const built = await buildApp(loadConfig({ SVC_DATA_DIR: dataDir }), { logger: false, announce: (m) => announced.push(m) });
      try {
        const password = /password: (\S+)/.exec(announced.join('\n'))?.[1];
        expect(announced.join('\n')).toContain(`email:    ${DEFAULT_ADMIN_EMAIL}`);
        const login = await built.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: DEFAULT_ADMIN_EMAIL, password } });
        expect(login.statusCode).toBe(200);
        built.db.$client.prepare('UPDATE users SET email = ? WHERE email = ?').run('admin@localhost', DEFAULT_ADMIN_EMAIL);
        const legacy = await built.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'admin@localhost', password } });
        expect(legacy.statusCode).toBe(200);
        const forgot = await built.app.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'admin@localhost' } });
        expect(forgot.statusCode).toBe(200);
        const bad = await built.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'not-an-email', password } });
        expect(bad.statusCode).toBe(400);
      } finally {
        await built.app.close();
      }
    });

    it('admin variables given to a data dir that has its administrator are ignored, with a note', async () => {
      const dataDir = path.join(root, 'data');
      await initDataDir(loadConfig({ SVC_DATA_DIR: dataDir }), () => {});
      const announced: string[] = [];
      const result = await initDataDir(
        loadConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_EMAIL: 'admin@example.com', SVC_ADMIN_PASSWORD: 'Another-Passw0rd' }),
        (m) => announced.push(m),
      );
      expect(result.created.administrator).toBe(false);
      expect(announced.join('\n')).toMatch(/SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD are ignored/);
    });

    it.each([['0.0.0.0.0'], ['999.1.1.1'], ['bad host'], ['[::1]']])('HOST %s is refused by the configuration, naming HOST (and --host)', (host) => {
      expect(() => loadConfig({ HOST: host })).toThrow(/\bHOST: expected an IP address or a host name/);
      expect(() => loadConfig({}, { host })).toThrow(/--host: expected an IP address or a host name/);
    });

    it('a --log-level override wins over SVC_LOG_LEVEL and is checked like it', () => {
      expect(loadConfig({ SVC_LOG_LEVEL: 'warn' }, { logLevel: 'debug' }).logLevel).toBe('debug');
      expect(loadConfig({ SVC_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
      expect(() => loadConfig({}, { logLevel: 'loud' })).toThrow(/--log-level: one of fatal, error, warn, info, debug, trace, silent/);
    });

    it.each([['127.0.0.1'], ['0.0.0.0'], ['::'], ['::1'], ['localhost'], ['svc.example.com']])('HOST %s is accepted', (host) => {
      expect(loadConfig({ HOST: host }).host).toBe(host);
    });

    /** `svc server start` until it exits by itself (a refusal). */
    const startRefused = (env: Record<string, string>, args: string[] = []) =>
      execa('node', [BIN, 'server', 'start', ...args], {
        env: cliEnv({ SVC_DATA_DIR: path.join(root, 'data'), ...env }),
        extendEnv: false,
        reject: false,
        timeout: 20_000,
      });

    it('a port in use: exit 6 ADDRESS_IN_USE, no database, no password printed, nothing in the data dir', async () => {
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = holder.address() as net.AddressInfo;
        const result = await startRefused({ PORT: String(port) });
        expect(result.exitCode).toBe(6);
        expect(result.stderr).toMatch(/127\.0\.0\.1:\d+ is in use by another process/);
        expect(result.stderr).not.toContain('password');
        expect(fs.existsSync(path.join(root, 'data'))).toBe(false);
      } finally {
        await new Promise((resolve) => holder.close(resolve));
      }
    });

    it.each([
      ['HOST=0.0.0.0.0', { HOST: '0.0.0.0.0' }, /HOST: expected an IP address/],
      ['an address this machine does not have', { HOST: '192.0.2.1' }, /192\.0\.2\.1 is not an address of this machine/],
    ])('%s: exit 2, no database, no password printed', async (_what, env, message) => {
      const result = await startRefused({ ...env, PORT: '0' });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('password');
      expect(fs.existsSync(path.join(root, 'data'))).toBe(false);
    });
  });
});
