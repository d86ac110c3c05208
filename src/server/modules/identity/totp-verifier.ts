import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { transaction, type Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import { users } from '../../db/schema/index.js';
import type { SecretBox } from '../../security/crypto.js';
import { totpStep } from '../../security/totp.js';

/** accepted: the code is valid and its step is now used; used: valid, but its step (or a later one) was
 * already accepted for this user; invalid: not a code of the secret now. */
export type TotpCheck = 'accepted' | 'used' | 'invalid';

export const TOTP_CODE_USED = 'MFA code already used; wait for the next one';

/** The compare-and-swap of a time step, prepared once per database (db/prepared.ts); the step goes in as a bare
 * placeholder, bound as given (a plain integer column). */
const takeStepQuery = preparedQueries((db) => {
  const step = sql`${sql.placeholder('step')}`;
  return db
    .update(users)
    .set({ mfaLastTotpStep: step })
    .where(and(eq(users.id, sql.placeholder('userId')), or(isNull(users.mfaLastTotpStep), lt(users.mfaLastTotpStep, step))))
    .prepare();
});

/**
 * The one TOTP check of the server (sign-in, enable, disable, PAM re-authentication): a code of the user's
 * sealed secret, whose time step is consumed on the user row. The conditional UPDATE makes the step a
 * compare-and-swap, so of two concurrent uses of one code one passes, and a restart forgets nothing.
 */
export function checkTotp(db: Db, box: SecretBox, userId: string, sealedSecret: string, code: string): TotpCheck {
  const step = totpStep(box.open(sealedSecret), code.trim());
  if (step === null) return 'invalid';
  const taken = transaction(db, () => takeStepQuery(db).run({ userId, step }));
  return taken.changes > 0 ? 'accepted' : 'used';
}
