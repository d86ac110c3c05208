import { and, eq } from 'drizzle-orm';
import type { z } from 'zod';
import type { MobileDeviceRegisterSchema, MobileSettingsSchema, PushTokenRegisterSchema } from '../../../contract/mobile.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { mobileDevices, mobilePushTokens } from '../../db/schema/index.js';
import type { MobileSeverity } from '../../db/schema/mobile.js';
import { DomainError, badRequest, forbidden, notFound } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';

export type MobileDeviceRow = typeof mobileDevices.$inferSelect;

/** A new registration pushes every severity until the user narrows it (api-notes "Mobile"). */
export const ALL_SEVERITIES: MobileSeverity[] = ['critical', 'high', 'medium', 'low', 'info'];

const isoNow = () => new Date().toISOString();

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
    this.db
      .insert(mobilePushTokens)
      .values({ userId, token: body.token, platform: body.platform })
      .onConflictDoUpdate({ target: mobilePushTokens.token, set: { userId, platform: body.platform, updatedAt: now } })
      .run();
    return { success: true };
  }

  unregisterToken(ctx: RequestContext, token: string): { success: true } {
    const userId = ownerOf(ctx);
    this.db.delete(mobilePushTokens).where(and(eq(mobilePushTokens.userId, userId), eq(mobilePushTokens.token, token))).run();
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
      const existing = this.db.select().from(mobileDevices).where(eq(mobileDevices.deviceId, body.deviceId)).get();
      if (existing && existing.userId !== userId) {
        throw new DomainError('conflict', 'This device is already registered to another account.', 'device_owned_by_other');
      }
      const row = existing
        ? this.db.update(mobileDevices).set({ ...fields, updatedAt: now }).where(eq(mobileDevices.id, existing.id)).returning().get()
        : this.db.insert(mobileDevices).values({ ...fields, userId, deviceId: body.deviceId, alertSeverities: ALL_SEVERITIES }).returning().get();
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
    const row = this.db.select().from(mobileDevices).where(and(eq(mobileDevices.id, id), eq(mobileDevices.userId, userId))).get();
    if (!row) throw notFound('Mobile device not found', 'MOBILE_DEVICE_NOT_FOUND');
    return row;
  }

  settings(ctx: RequestContext, id: string, body: z.infer<typeof MobileSettingsSchema>): MobileDeviceRow {
    if (body.enabled === undefined && body.severities === undefined && body.quietHours === undefined) {
      throw badRequest('No settings provided', 'NO_SETTINGS_PROVIDED');
    }
    const row = this.own(ctx, id);
    return this.db
      .update(mobileDevices)
      .set({
        ...(body.enabled !== undefined ? { notificationsEnabled: body.enabled } : {}),
        ...(body.severities !== undefined ? { alertSeverities: [...new Set(body.severities)] } : {}),
        ...(body.quietHours !== undefined ? { quietHours: body.quietHours } : {}),
        updatedAt: isoNow(),
      })
      .where(eq(mobileDevices.id, row.id))
      .returning()
      .get();
  }

  remove(ctx: RequestContext, id: string): { success: true } {
    const row = this.own(ctx, id);
    this.db.$client.transaction(() => {
      this.db.delete(mobileDevices).where(eq(mobileDevices.id, row.id)).run();
      recordAudit(this.db, ctx, { action: 'mobile.device.delete', resourceType: 'mobile_device', resourceId: row.id, resourceName: row.model ?? row.deviceId });
    })();
    return { success: true };
  }
}
