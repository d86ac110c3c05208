import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CommandError } from './base-command.js';
import { ExitCode } from './exit-codes.js';
import { UsageError } from './prompts.js';
import { canPrompt, type TerminalInfo } from './terminal.js';

/** How long `svc login --sso` waits for the browser to come back. */
const WAIT_MS = 5 * 60_000;

const PAGE = (message: string) =>
  `<!doctype html><meta charset="utf-8"><title>svc</title><p>${message.replace(/[<>&]/g, '')}</p><p>You can close this window.</p>`;

export interface SsoCallback {
  code: string;
  codeVerifier: string;
}

/** The browser: `$BROWSER` when set (the usual convention, also how tests substitute an HTTP client), else the
 * platform's opener. Answers whether something was started; the URL is printed either way. */
function openBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  const [command, args] = env.BROWSER
    ? [env.BROWSER, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/**
 * The CLI side of SSO sign-in (docs/api-notes.md "Single sign-on"): a one-shot listener on a loopback port, a
 * PKCE pair whose challenge the server binds the ssoCode to, the browser sent to `GET /sso/login/:orgId`, and
 * the ssoCode (or the server's ssoError) read from the listener's query. Needs a terminal, or `$BROWSER`.
 */
export async function receiveSsoCode(options: {
  baseUrl: string;
  orgId: string;
  terminal: TerminalInfo;
  env?: NodeJS.ProcessEnv;
  announce: (message: string) => void;
}): Promise<SsoCallback> {
  const env = options.env ?? process.env;
  if (!canPrompt(options.terminal) && !env.BROWSER) {
    throw new UsageError(
      'svc login --sso needs a terminal and a browser. Without one, sign in with --email and --password-stdin, or with --api-key-stdin (or set SVC_TOKEN / SVC_API_KEY).',
      '--sso',
    );
  }
  const codeVerifier = randomBytes(32).toString('base64url');
  const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sso/callback`;
    const start = new URL(`${options.baseUrl.replace(/\/+$/, '')}/api/v1/sso/login/${encodeURIComponent(options.orgId)}`);
    start.searchParams.set('redirectUri', redirectUri);
    start.searchParams.set('codeChallenge', codeChallenge);
    const code = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new UsageError('No answer from the browser within 5 minutes; run svc login --sso again', '--sso')), WAIT_MS);
      server.on('request', (req, res) => {
        const url = new URL(req.url ?? '/', redirectUri);
        if (url.pathname !== '/sso/callback') {
          res.writeHead(404).end();
          return;
        }
        const ssoCode = url.searchParams.get('ssoCode');
        const error = url.searchParams.get('ssoError');
        const message = ssoCode ? 'Signed in to svc.' : `Sign-in failed: ${url.searchParams.get('ssoErrorDescription') ?? error ?? 'no code'}`;
        res.writeHead(ssoCode ? 200 : 400, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE(message));
        clearTimeout(timer);
        if (ssoCode) resolve(ssoCode);
        else reject(new CommandError(message, ExitCode.AUTH, error ?? 'SSO_FAILED'));
      });
    });
    const opened = openBrowser(start.href, env);
    options.announce(opened ? `Opening the browser to sign in. If it does not open, visit:\n  ${start.href}` : `Visit this address to sign in:\n  ${start.href}`);
    return { code: await code, codeVerifier };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
