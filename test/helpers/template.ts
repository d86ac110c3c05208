import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * Template data dirs: a first start (migrations, built-in roles, system administrator, server keys) done once
 * per run and per bootstrap environment, then its database is copied into each test's data dir. On the copy, the app's own
 * start finds every migration applied and the administrator present, so it does the rest as usual.
 *
 * The templates live under the directory vitest's global setup provides (test/helpers/global-setup.ts), shared
 * by the workers of one run and removed at its end: a build in one worker serves the others.
 */

/** The settings that change what a first start writes. A setting added to first start belongs here. */
export const BOOTSTRAP_ENV = [
  'SVC_ADMIN_EMAIL',
  'SVC_ADMIN_PASSWORD',
  'SVC_JWT_SECRET',
  'SVC_ENCRYPTION_KEY',
  'SVC_ENROLLMENT_PEPPER',
] as const;

/** Builds a first-started data dir into `dir` (which does not exist yet) from the bootstrap settings. */
export type TemplateBuilder = (dir: string, env: Record<string, string>) => Promise<void>;

let processRoot: string | undefined;

function templateRoot(): string {
  const provided = inject('svcTemplateRoot');
  if (provided) return provided;
  // Run outside the project's config (no global setup): templates for this process only.
  if (!processRoot) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-templates-'));
    process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
    processRoot = root;
  }
  return processRoot;
}

const building = new Map<string, Promise<string | undefined>>();

/**
 * The template for an environment, built by `build` the first time in this run; undefined when a copy would not
 * be what a fresh start gives: without SVC_ADMIN_PASSWORD the first start generates one and announces it once.
 */
export function templateFor(
  env: Record<string, string | undefined>,
  kind: string,
  build: TemplateBuilder,
): Promise<string | undefined> {
  if (!env.SVC_ADMIN_PASSWORD) return Promise.resolve(undefined);
  const bootstrap = Object.fromEntries(BOOTSTRAP_ENV.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  const key = createHash('sha256')
    .update(JSON.stringify([kind, bootstrap]))
    .digest('hex')
    .slice(0, 16);
  let pending = building.get(key);
  if (!pending) {
    pending = buildOnce(path.join(templateRoot(), key), bootstrap, build);
    building.set(key, pending);
  }
  return pending;
}

async function buildOnce(dir: string, env: Record<string, string>, build: TemplateBuilder): Promise<string> {
  if (fs.existsSync(dir)) return dir;
  const staging = `${dir}.${randomUUID()}`;
  await build(staging, env);
  try {
    // Atomic: another worker that built the same template first keeps its own.
    fs.renameSync(staging, dir);
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(dir)) throw err;
  }
  return dir;
}

/** Copies a template's database (closed, so its WAL is checkpointed into it) and its key file into a data dir:
 * the database records a check of the keys it was started with (server_meta `serverKeyCheck`), so the two travel
 * together, as a backup taken `--with-secrets` does. Copies of one template share keys, never rows. */
export function copyTemplate(template: string, dataDir: string): void {
  for (const name of fs.readdirSync(template)) {
    if (name !== 'server.pid' && name !== 'server.log') fs.copyFileSync(path.join(template, name), path.join(dataDir, name));
  }
}
