import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export interface ServerSecrets {
  jwtSecret: string;
  encryptionKey: string;
  enrollmentPepper: string;
}

const SecretsFileSchema = z.object({
  jwtSecret: z.string().min(32),
  encryptionKey: z.string().regex(/^[0-9a-f]{64}$/i),
  enrollmentPepper: z.string().min(32),
});

export const SECRETS_FILE = 'secrets.json';

/** Server keys: from the environment when given, else generated once into the data dir with mode 0600. */
export function loadServerSecrets(dataDir: string, fromEnv: Partial<ServerSecrets>): ServerSecrets {
  const file = path.join(dataDir, SECRETS_FILE);
  let stored: ServerSecrets | undefined;
  if (fs.existsSync(file)) {
    const parsed = SecretsFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (!parsed.success) throw new Error(`${file} is not a valid secrets file`);
    stored = parsed.data;
  }
  const missing = !stored && (!fromEnv.jwtSecret || !fromEnv.encryptionKey || !fromEnv.enrollmentPepper);
  if (missing) {
    stored = {
      jwtSecret: randomBytes(48).toString('base64url'),
      encryptionKey: randomBytes(32).toString('hex'),
      enrollmentPepper: randomBytes(32).toString('base64url'),
    };
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600, flag: 'wx' });
  }
  return {
    jwtSecret: fromEnv.jwtSecret ?? stored?.jwtSecret ?? '',
    encryptionKey: fromEnv.encryptionKey ?? stored?.encryptionKey ?? '',
    enrollmentPepper: fromEnv.enrollmentPepper ?? stored?.enrollmentPepper ?? '',
  };
}
