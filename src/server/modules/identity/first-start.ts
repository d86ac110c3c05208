import { randomBytes } from 'node:crypto';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { serverMeta, users } from '../../db/schema/index.js';
import { systemContext } from '../../context.js';
import { hashPassword } from '../../security/passwords.js';
import { recordAudit } from '../audit/recorder.js';
import { countRows } from '../../lib/paging.js';

export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';

/** A generated password: 24 characters from a CSPRNG, always with upper, lower case and digits. */
function generatePassword(): string {
  for (;;) {
    const candidate = randomBytes(18).toString('base64url');
    if (/[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /\d/.test(candidate)) return candidate;
  }
}

/** First start on an empty database creates the system administrator from SVC_ADMIN_EMAIL and
 * SVC_ADMIN_PASSWORD, or with a generated password that is printed once. */
export async function ensureSystemAdmin(db: Db, config: ServerConfig, announce: (message: string) => void): Promise<void> {
  if (countRows(db, users) > 0) return;
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
  if (created && generated) {
    announce(
      [
        'svc: created the system administrator on first start.',
        `  email:    ${email}`,
        `  password: ${password}`,
        'This password is shown once. Sign in with `svc login` and change it with `svc users me change-password`.',
      ].join('\n'),
    );
  } else if (created) {
    announce(`svc: created the system administrator ${email} on first start.`);
  }
}
