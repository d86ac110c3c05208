import { afterEach, beforeEach, vi } from 'vitest';
import { startReceiver, type Receiver, type Responder } from './https-receiver.js';
import { createTestApp, type Answer, type TestApp } from './server.js';
import { seedWorld, type World, type WorldCaller } from './seed.js';
import { startSmtp, type Inbox } from './smtp.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `call` on an `/api/v1` path as one of the world's callers, with an optional JSON body. */
export type WorldCall = (who: WorldCaller, method: Method, url: string, body?: unknown) => Promise<Answer>;

/**
 * The set-up most server tests share: before each test a fresh app (createTestApp with `env`) seeded with
 * `seedWorld` (tokens with the `mfa` claim), handed to `ready`; after it, the app is closed. Returns `as`, the
 * world's callers' call.
 */
export function useWorld(
  options: { mfa?: boolean; env?: Record<string, string> },
  ready: (t: TestApp, w: World) => void,
): WorldCall {
  let app: TestApp | undefined;
  let world: World | undefined;
  beforeEach(async () => {
    app = await createTestApp(options.env);
    world = await seedWorld(app, { mfa: options.mfa ?? false });
    ready(app, world);
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  return (who, method, url, body) => {
    if (!app || !world) throw new Error('useWorld: call `as` inside a test');
    return app.call(method, `/api/v1${url}`, { token: world.tokens[who], ...(body !== undefined ? { body } : {}) });
  };
}

/**
 * For server tests whose app reaches loopback HTTPS receivers: `setup` creates the app (createTestApp with `env`),
 * seeds the world (mfa claim true unless `mfa: false`) and starts a receiver answering with `respond`. After each
 * test everything is closed: apps handed to `alsoClose` (a second app on the same data dir), the app, the receivers.
 */
export function useReceiverWorld(env: Record<string, string>) {
  let app: TestApp | undefined;
  const receivers: Receiver[] = [];
  const extraApps: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(extraApps.splice(0).map((a) => a.close()));
    await app?.close();
    app = undefined;
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  return {
    async setup(respond?: Responder, options: { mfa?: boolean } = {}): Promise<{ t: TestApp; w: World; receiver: Receiver }> {
      app = await createTestApp(env);
      const w = await seedWorld(app, { mfa: options.mfa ?? true });
      const receiver = await startReceiver(respond);
      receivers.push(receiver);
      return { t: app, w, receiver };
    },
    alsoClose(other: { close(): Promise<void> }): void {
      extraApps.push(other);
    },
  };
}

/**
 * For server tests that send mail: before each test an SMTP inbox on loopback, a fresh app (createTestApp with
 * SVC_SMTP_URL at the inbox, and `env`) and its seeded world (mfa claim only with `mfa: true`), handed to `ready`;
 * after it, real timers again (a test may have faked them), then the app and the inbox are closed.
 */
export function useMailWorld(
  env: Record<string, string>,
  options: { mfa?: boolean },
  ready: (fixture: { t: TestApp; w: World; inbox: Inbox }) => void,
): void {
  let app: TestApp | undefined;
  let inbox: Inbox | undefined;
  beforeEach(async () => {
    inbox = await startSmtp();
    app = await createTestApp({ SVC_SMTP_URL: inbox.url, ...env });
    ready({ t: app, w: await seedWorld(app, { mfa: options.mfa ?? false }), inbox });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await app?.close();
    app = undefined;
    await inbox?.close();
    inbox = undefined;
  });
}
