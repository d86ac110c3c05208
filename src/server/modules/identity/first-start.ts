import { randomBytes } from 'node:crypto';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { serverMeta, users } from '../../db/schema/index.js';
import { systemContext } from '../../context.js';
import { hashPassword } from '../../security/passwords.js';
import { recordAudit } from '../audit/recorder.js';
import { countRows } from '../../lib/paging.js';

/** The administrator's address when SVC_ADMIN_EMAIL is not given: one every contract accepts (zod's e-mail
 * rule wants a dot in the domain, so not `admin@localhost`), under `.localhost`, a name reserved for this
 * machine (RFC 6761) that no mail goes to. */
export const DEFAULT_ADMIN_EMAIL = 'admin@svc.localhost';

/** A generated password: 24 characters from a CSPRNG, always with upper, lower case and digits. */
function generatePassword(): string {
  for (;;) {
    const candidate = randomBytes(18).toString('base64url');
    if (/[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /\d/.test(candidate)) return candidate;
  }
}

/** First start on an empty database creates the system administrator from SVC_ADMIN_EMAIL and
 * SVC_ADMIN_PASSWORD, or with a generated password that is printed once. Later starts leave the accounts
 * alone; admin variables given then are ignored, and `announce` says so. */
export async function ensureSystemAdmin(
  db: Db,
  config: ServerConfig,
  announce: (message: string) => void,
): Promise<'created' | 'exists'> {
  const ignored = () => {
    const given = [config.admin.email && 'SVC_ADMIN_EMAIL', config.admin.password && 'SVC_ADMIN_PASSWORD'].filter(Boolean);
    if (given.length > 0)
      announce(
        `svc: ${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} ignored: ${given.length > 1 ? 'they create' : 'it creates'} the system administrator on the first start only, and this database has its accounts already (change a password with \`svc users me change-password\`).`,
      );
    return 'exists' as const;
  };
  if (countRows(db, users) > 0) return ignored();
  const email = (config.admin.email ?? DEFAULT_ADMIN_EMAIL).toLowerCase();
  const generated = config.admin.password === undefined;
  const password = config.admin.password ?? generatePassword();
  const passwordHash = await hashPassword(password);
  const created = db.$client.transaction(() => {
    if (countRows(db, users) > 0) return false;
    const admin = db.insert(users).values({ email, name: 'System Administrator', passwordHash, isSystemAdmin: true, status: 'active' }).returning().get();
    db.insert(serverMeta).values({ key: 'initializedAt', value: new Date().toISOString() }).onConflictDoNothing().run();
    recordAudit(db, systemContext(), { action: 'user.create', resourceType: 'user', resourceId: admin.id, resourceName: email, details: { systemAdmin: true, firstStart: true } });
    return true;
  })();
  if (!created) return ignored();
  if (generated) {
    announce(
      [
        'svc: created the system administrator on first start.',
        `  email:    ${email}`,
        `  password: ${password}`,
        `This password is shown once. Sign in with \`svc login --email ${email}\` and change it with \`svc users me change-password\`.`,
      ].join('\n'),
    );
  } else {
    announce(`svc: created the system administrator ${email} on first start.`);
  }
  return 'created';
}
