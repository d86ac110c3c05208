import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { users } from '../../src/server/db/schema/index.js';
import { loggerOptions } from '../../src/server/logging.js';
import { launchBrowser, openTab, type WatchedPage } from '../helpers/browser.js';
import { ROLES } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const ADMIN = { email: 'admin@pages.test', password: 'Admin-Passw0rd!' };
const STRONG = 'Browser-Passw0rd-1';
const FORM = 'application/x-www-form-urlencoded';

/**
 * The pages behind invitation and reset links, in a real headless Chromium against the server listening on a
 * loopback port (the browser must reach it). JavaScript is off in the browser: the pages work without it.
 */
describe('invitation and password-reset pages in a browser', () => {
  let built: BuiltApp;
  let dataDir: string;
  let base: string;
  let browser: Browser;
  let adminToken: string;
  let partnerId: string;
  const log: string[] = [];
  /** Every token and password the tests used: none may reach the request log. */
  const secrets: string[] = [];

  async function api(method: string, apiPath: string, body?: unknown, token = adminToken) {
    const res = await fetch(`${base}/api/v1${apiPath}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** The link's page on the listening server (links name the configured port, which is 0 here). */
  function onServer(link: string): string {
    const url = new URL(link);
    const token = url.searchParams.get('token');
    if (token) secrets.push(token);
    return `${base}${url.pathname}${url.search}`;
  }

  async function invite(email: string): Promise<string> {
    const res = await api('POST', '/users/invite', { email, name: 'Invited Person', roleId: ROLES.partnerViewer, partnerId });
    expect(res.status).toBe(201);
    return onServer(res.body.inviteUrl as string);
  }

  async function resetLink(email: string): Promise<string> {
    const user = built.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
    const res = await api('POST', `/users/${user?.id ?? ''}/reset-password`);
    expect(res.status).toBe(200);
    return onServer(res.body.resetUrl as string);
  }

  async function signIn(email: string, password: string): Promise<number> {
    return (await api('POST', '/auth/login', { email, password }, '')).status;
  }

  async function fill(page: Page, values: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(values)) {
      secrets.push(value);
      await page.type(`input[name="${name}"]`, value);
    }
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  }

  const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent ?? '');

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pages-'));
    const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_EMAIL: ADMIN.email, SVC_ADMIN_PASSWORD: ADMIN.password });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        log.push(chunk.toString());
        callback();
      },
    });
    built = await buildApp(config, { logger: { ...(loggerOptions('info') as object), stream }, announce: () => {} });
    base = await built.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchBrowser();
    const admin = built.db.select({ id: users.id }).from(users).where(eq(users.isSystemAdmin, true)).get();
    adminToken = (await built.services.sessions.issue(admin?.id ?? '', true, { ip: null, userAgent: null, signInMethod: 'password' })).accessToken;
    const partner = await api('POST', '/orgs/partners', { name: 'Page Partner', slug: 'page-partner' });
    expect(partner.status).toBe(201);
    partnerId = partner.body.id as string;
  });

  afterAll(async () => {
    await browser?.close();
    await built?.app.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('01§4.4 an invitation link opens a form; submitting it activates the account, which then signs in', async () => {
    const link = await invite('ada@pages.test');
    const tab: WatchedPage = await openTab(browser);
    const response = await tab.page.goto(link);
    expect(response?.status()).toBe(200);
    expect(await tab.page.$('input[name="token"]')).not.toBeNull();
    expect(await signIn('ada@pages.test', STRONG)).toBe(401);

    await fill(tab.page, { name: 'Ada Lovelace', password: STRONG, confirm: STRONG });
    expect(await text(tab.page, '.done')).toContain('ada@pages.test is active');
    // The token left the address bar with the first submit.
    expect(tab.page.url()).toBe(`${base}/accept-invite`);
    expect(await signIn('ada@pages.test', STRONG)).toBe(200);
    const users = await api('GET', `/users?partnerId=${partnerId}`);
    expect(users.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'ada@pages.test', name: 'Ada Lovelace', status: 'active' })]));
    await tab.page.close();
  });

  it('the page is locked down: CSP, no referrer, no caching, no framing; it loads nothing but itself', async () => {
    const link = await invite('csp@pages.test');
    const tab = await openTab(browser);
    const response = await tab.page.goto(link);
    const headers = response?.headers() ?? {};
    expect(headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'/);
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['content-type']).toBe('text/html; charset=utf-8');
    // The hashed inline style applied (a refused one would leave the button unstyled) and nothing was refused.
    expect(await tab.page.$eval('button', (e) => (globalThis as any).getComputedStyle(e).backgroundColor as string)).toBe('rgb(36, 87, 197)');
    expect(tab.console.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
    // One request: the page itself (no script, style sheet, font or image from anywhere).
    expect(tab.requests).toEqual([link]);
    await fill(tab.page, { password: STRONG, confirm: STRONG });
    expect(tab.requests).toEqual([link, `${base}/accept-invite`]);
    await tab.page.close();
  });

  it('01§4.4 a used invitation link shows the server\'s error, and a form opened before shows it on submit', async () => {
    const link = await invite('used@pages.test');
    const stale = await openTab(browser);
    await stale.page.goto(link);
    // The invitation is accepted elsewhere (the API) while this tab is open.
    const token = new URL(link).searchParams.get('token');
    expect((await api('POST', '/auth/accept-invite', { token, password: STRONG }, '')).status).toBe(200);

    await fill(stale.page, { password: STRONG, confirm: STRONG });
    expect(await text(stale.page, '.error')).toBe('Invalid or expired invitation');
    expect(await stale.page.$('form')).toBeNull();

    const again = await openTab(browser);
    const response = await again.page.goto(link);
    expect(response?.status()).toBe(400);
    expect(await text(again.page, '.error')).toBe('Invalid or expired invitation');
    expect(await again.page.$('form')).toBeNull();
    await stale.page.close();
    await again.page.close();
  });

  it('01§4.5 a weak password shows the server\'s rule on the page; the same link then takes a strong one', async () => {
    const link = await resetLink('ada@pages.test');
    const tab = await openTab(browser);
    await tab.page.goto(link);
    await fill(tab.page, { password: 'alllowercase1', confirm: 'alllowercase1' });
    expect(await text(tab.page, '.error')).toBe('Password must contain upper and lower case letters');
    await fill(tab.page, { password: 'Mismatch-Passw0rd', confirm: 'Other-Passw0rd-2' });
    expect(await text(tab.page, '.error')).toBe('The two passwords do not match.');

    const next = 'Reset-Passw0rd-2';
    await fill(tab.page, { password: next, confirm: next });
    expect(await text(tab.page, '.done')).toBe('Your password has been changed.');
    expect(await signIn('ada@pages.test', STRONG)).toBe(401);
    expect(await signIn('ada@pages.test', next)).toBe(200);
    await tab.page.close();
  });

  it('01§4.5 a reset ends every session of the account, as the API\'s reset does', async () => {
    const login = await api('POST', '/auth/login', { email: 'ada@pages.test', password: 'Reset-Passw0rd-2' }, '');
    const session = login.body.tokens.accessToken as string;
    expect((await api('GET', '/users/me', undefined, session)).status).toBe(200);
    const tab = await openTab(browser);
    await tab.page.goto(await resetLink('ada@pages.test'));
    await fill(tab.page, { password: 'Third-Passw0rd-3', confirm: 'Third-Passw0rd-3' });
    expect(await text(tab.page, '.done')).toBe('Your password has been changed.');
    expect((await api('GET', '/users/me', undefined, session)).status).toBe(401);
    await tab.page.close();
  });

  it('what the page echoes is escaped: a name with markup comes back as text', async () => {
    const link = await invite('markup@pages.test');
    const tab = await openTab(browser);
    await tab.page.goto(link);
    const name = '<img src=x><b>bold</b>"\'&';
    await fill(tab.page, { name, password: STRONG, confirm: 'Other-Passw0rd-2' });
    expect(await text(tab.page, '.error')).toBe('The two passwords do not match.');
    expect(await tab.page.$eval('input[name="name"]', (e) => (e as any).value as string)).toBe(name);
    expect(await tab.page.$('img, b')).toBeNull();
    expect(tab.requests.some((url) => url.endsWith('/x'))).toBe(false);
    await tab.page.close();
  });

  it('no token or password reaches the request log', async () => {
    const all = log.join('');
    // The pages were logged: the check would prove nothing on an empty log.
    expect(all).toContain('/accept-invite?token=%5Bredacted%5D');
    expect(all).toContain('"url":"/reset-password"');
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(all, `${secret} appears in the log`).not.toContain(secret);
  });
});

describe('the pages without a browser (inject)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a link without a token, or with an unknown one, answers 400 with the error and no form', async () => {
    for (const url of ['/accept-invite', '/accept-invite?token=', '/reset-password?token=nope', '/reset-password?token=a&token=b']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.body).toMatch(/Invalid or expired (invitation|reset token)/);
      expect(res.body).not.toContain('<form');
    }
  });

  it('posts with a missing, unknown or oversized field answer a page, never a 500', async () => {
    const cases = ['', 'token=', 'password=x', 'token=nope&password=Strong-Passw0rd&confirm=Strong-Passw0rd', `token=${'a'.repeat(600)}&password=x`, 'token[]=a&token[]=b', '%%%', `name=${'n'.repeat(300)}&token=x&password=y`];
    for (const payload of cases) {
      for (const url of ['/accept-invite', '/reset-password']) {
        const res = await t.app.inject({ method: 'POST', url, headers: { 'content-type': FORM }, payload });
        expect(res.statusCode, `${url} ${payload}`).toBe(400);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      }
    }
    const huge = await t.app.inject({ method: 'POST', url: '/accept-invite', headers: { 'content-type': FORM }, payload: `token=${'a'.repeat(20_000)}` });
    expect(huge.statusCode).toBe(413);
    const json = await t.app.inject({ method: 'POST', url: '/reset-password', payload: { token: 'x', password: 'y', confirm: 'y' } });
    expect(json.statusCode).toBe(400);
  });

  it('the API keeps refusing form bodies (the form parser serves the pages only)', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset-password', headers: { 'content-type': FORM }, payload: 'token=x&password=y' });
    expect(res.statusCode).toBe(415);
  });
});
