import { and, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { MobileDeviceRegisterSchema, MobileSettingsSchema, PushTokenRegisterSchema } from '../../../contract/mobile.js';
import type { RequestContext } from '../../context.js';
import { transaction, type Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { deleteById, insertRow, preparedQueries, rowQuery, updateRow } from '../../db/prepared.js';
import { mobileDevices, mobilePushTokens } from '../../db/schema/index.js';
import type { MobileSeverity } from '../../db/schema/mobile.js';
import { DomainError, badRequest, forbidden, notFound } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';

export type MobileDeviceRow = typeof mobileDevices.$inferSelect;

/** A new registration pushes every severity until the user narrows it (api-notes "Mobile"). */
export const ALL_SEVERITIES: MobileSeverity[] = ['critical', 'high', 'medium', 'low', 'info'];

const isoNow = () => new Date().toISOString();

/** The statements of registration, prepared once per database. */
const registrationQueries = preparedQueries((db) => {
  const t = mobilePushTokens;
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    /** Registers `token` for `userId` on `platform`, or moves it there (at `now`). */
    upsertToken: db
      .insert(t)
      .values({ id: value('id'), userId: value('userId'), token: value('token'), platform: value('platform'), createdAt: value('now'), updatedAt: value('now') })
      .onConflictDoUpdate({ target: t.token, set: { userId: value('userId'), platform: value('platform'), updatedAt: value('now') } })
      .prepare(),
    /** Removes `userId`'s `token`. */
    dropToken: db.delete(t).where(and(eq(t.userId, sql.placeholder('userId')), eq(t.token, sql.placeholder('token')))).prepare(),
    /** The phone of install `deviceId`. */
    byInstall: rowQuery(db, mobileDevices, eq(mobileDevices.deviceId, sql.placeholder('deviceId'))),
    /** Phone `id` if it is `userId`'s. */
    ownBy: rowQuery(db, mobileDevices, and(eq(mobileDevices.id, sql.placeholder('id')), eq(mobileDevices.userId, sql.placeholder('userId')))),
  };
});

const MOBILE_DEVICE_NOT_FOUND = () => notFound('Mobile device not found', 'MOBILE_DEVICE_NOT_FOUND');

/** Registration and settings are the signed-in person's own (05 wire notes "bearer only"); the contract refuses
 * API keys, and this refuses a session without a user. */
function ownerOf(ctx: RequestContext): string {
  if (!ctx.caller.userId || ctx.caller.kind !== 'user') throw forbidden('A user session is required', 'SESSION_REQUIRED');
  return ctx.caller.userId;
}

/** Phones registered for push (02 §2.10) and the older push-token calls; every row is its owner's alone. */
export class MobileRegistration {
  constructor(private readonly db: Db) {}

  registerToken(ctx: RequestContext, body: z.infer<typeof PushTokenRegisterSchema>): { success: true } {
    const userId = ownerOf(ctx);
    const now = isoNow();
    // A token is one app install: registering it again (also after the phone changed hands) moves it.
    transaction(this.db, () => registrationQueries(this.db).upsertToken.run({ id: newId(), userId, token: body.token, platform: body.platform, now }));
    return { success: true };
  }

  unregisterToken(ctx: RequestContext, token: string): { success: true } {
    const userId = ownerOf(ctx);
    transaction(this.db, () => registrationQueries(this.db).dropToken.run({ userId, token }));
    return { success: true };
  }

  /** 02 §4.6: upsert on deviceId; the platform's token is required; another user's deviceId is 409. */
  registerDevice(ctx: RequestContext, body: z.infer<typeof MobileDeviceRegisterSchema>): MobileDeviceRow {
    const userId = ownerOf(ctx);
    if (body.platform === 'ios' && !body.apnsToken) throw badRequest('apnsToken is required for iOS devices', 'APNS_TOKEN_REQUIRED');
    if (body.platform === 'android' && !body.fcmToken) throw badRequest('fcmToken is required for Android devices', 'FCM_TOKEN_REQUIRED');
    const now = isoNow();
    const fields = {
      platform: body.platform,
      model: body.model ?? null,
      osVersion: body.osVersion ?? null,
      appVersion: body.appVersion ?? null,
      // A phone has the one provider of its platform: the other token is cleared when the platform changes.
      fcmToken: body.platform === 'android' ? (body.fcmToken ?? null) : null,
      apnsToken: body.platform === 'ios' ? (body.apnsToken ?? null) : null,
      lastActiveAt: now,
    };
    return this.db.$client.transaction(() => {
      const existing = registrationQueries(this.db).byInstall.get({ deviceId: body.deviceId });
      if (existing && existing.userId !== userId) {
        throw new DomainError('conflict', 'This device is already registered to another account.', 'device_owned_by_other');
      }
      const row = existing
        ? updateRow(this.db, mobileDevices, existing, { ...fields, updatedAt: now })
        : insertRow(this.db, mobileDevices, { ...fields, userId, deviceId: body.deviceId, alertSeverities: ALL_SEVERITIES });
      if (!row) throw MOBILE_DEVICE_NOT_FOUND();
      recordAudit(this.db, ctx, {
        action: existing ? 'mobile.device.update' : 'mobile.device.register',
        resourceType: 'mobile_device',
        resourceId: row.id,
        resourceName: body.model ?? body.deviceId,
        details: { platform: row.platform, deviceId: row.deviceId },
      });
      return row;
    })();
  }

  /** The caller's own registration; anyone else's answers 404 like an absent one. */
  private own(ctx: RequestContext, id: string): MobileDeviceRow {
    const userId = ownerOf(ctx);
    const row = registrationQueries(this.db).ownBy.get({ id, userId });
    if (!row) throw MOBILE_DEVICE_NOT_FOUND();
    return row;
  }

  settings(ctx: RequestContext, id: string, body: z.infer<typeof MobileSettingsSchema>): MobileDeviceRow {
    if (body.enabled === undefined && body.severities === undefined && body.quietHours === undefined) {
      throw badRequest('No settings provided', 'NO_SETTINGS_PROVIDED');
    }
    return this.db.$client.transaction(() => {
      const row = this.own(ctx, id);
      const updated = updateRow(this.db, mobileDevices, row, {
        ...(body.enabled !== undefined ? { notificationsEnabled: body.enabled } : {}),
        ...(body.severities !== undefined ? { alertSeverities: [...new Set(body.severities)] } : {}),
        ...(body.quietHours !== undefined ? { quietHours: body.quietHours } : {}),
        updatedAt: isoNow(),
      });
      if (!updated) throw MOBILE_DEVICE_NOT_FOUND();
      return updated;
    })();
  }

  remove(ctx: RequestContext, id: string): { success: true } {
    const row = this.own(ctx, id);
    this.db.$client.transaction(() => {
      deleteById(this.db, mobileDevices, row.id);
      recordAudit(this.db, ctx, { action: 'mobile.device.delete', resourceType: 'mobile_device', resourceId: row.id, resourceName: row.model ?? row.deviceId });
    })();
    return { success: true };
  }
}
