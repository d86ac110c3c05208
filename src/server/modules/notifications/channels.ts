import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { ChannelCreateSchema, ChannelListQuerySchema, ChannelType, ChannelUpdateSchema } from '../../../contract/alert-channels.js';
import type { RequestContext } from '../../context.js';
import { transaction, type Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedQueries, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { notificationChannels } from '../../db/schema/index.js';
import { badRequest, notFound } from '../../errors.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import type { SecretBox } from '../../security/crypto.js';
import { visibleOr404 } from '../shared/visible.js';
import type { TenancyService } from '../tenancy/service.js';
import { assertValidConfig, maskConfig, unmaskConfig, type ChannelConfig } from './channel-config.js';
import { auditOrgRow, listOrgReach } from './org-scope.js';
import { resolveWriteOrg } from '../tenancy/access.js';
import type { Senders, SendResult } from './senders.js';
import { newId } from '../../db/ids.js';

export type ChannelRow = typeof notificationChannels.$inferSelect;
/** A channel with its configuration opened (for senders). */
export type OpenChannel = Omit<ChannelRow, 'configSealed'> & { config: ChannelConfig };

const NOT_FOUND = 'Notification channel not found';

/** 05-wire-notes 4.1: the test message of `POST /alerts/channels/:id/test`. */
export const TEST_MESSAGE = {
  title: 'Test notification',
  message: 'This is a test notification from svc. If you can read it, the channel works.',
  severity: 'info' as const,
  source: 'manual_test' as const,
};

/** Prepared once per database (db/prepared.ts): which of the JSON array `ids` are channels of the organization
 * `orgId`; an organization's enabled channels, all of them or (`among`) those of the JSON array `ids`, in id
 * order there, the order the list of ids was read in when it was bound value by value. */
const channelQueries = preparedQueries((db) => {
  const enabledOf = and(eq(notificationChannels.orgId, sql.placeholder('orgId')), eq(notificationChannels.enabled, true));
  return {
    idsOfOrg: db
      .select({ id: notificationChannels.id })
      .from(notificationChannels)
      .where(and(eq(notificationChannels.orgId, sql.placeholder('orgId')), inJson(notificationChannels.id, 'ids')))
      .prepare(),
    enabled: rowQuery(db, notificationChannels, enabledOf),
    enabledAmong: rowQuery(db, notificationChannels, and(enabledOf, inJson(notificationChannels.id, 'ids')), { orderBy: [asc(notificationChannels.id)] }),
  };
});

/** A page of channels, per shape: 'o' within the organizations of `orgIds` (JSON array), 't' of one `type`, 'e'
 * whose `enabled` is the one asked. */
const channelPageOf = preparedPages(notificationChannels, [desc(notificationChannels.updatedAt), sql`rowid DESC`], (shape) =>
  and(
    ...shapeConditions(shape, {
      o: () => inJson(notificationChannels.orgId, 'orgIds'),
      t: () => eq(notificationChannels.type, sql.placeholder('type')),
      e: () => sql`${notificationChannels.enabled} = ${sql.placeholder('enabled')}`,
    }),
  ),
);

/** Which of these ids are channels of the organization: escalation steps and alert rules may name only those
 * (the alerts module checks its rules with this, as it is built without this module's services). */
export function channelIdsOfOrg(db: Db, orgId: string, ids: readonly string[]): Set<string> {
  if (ids.length === 0) return new Set();
  const rows = channelQueries(db).idsOfOrg.all({ orgId, ids: JSON.stringify(ids) });
  return new Set(rows.map((r) => r.id));
}

/** 02 §2.4 notification channels and 05-wire-notes 4.1 `/alerts/channels`. */
export class ChannelsService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly tenancy: TenancyService,
    private readonly senders: Senders,
  ) {}

  private open(row: ChannelRow): OpenChannel {
    const { configSealed, ...rest } = row;
    return { ...rest, config: JSON.parse(this.box.open(configSealed)) as ChannelConfig };
  }

  private view(row: ChannelRow) {
    const channel = this.open(row);
    return { ...channel, config: maskConfig(channel.type, channel.config) };
  }

  private seal(config: ChannelConfig): string {
    return this.box.seal(JSON.stringify(config));
  }

  list(ctx: RequestContext, query: z.infer<typeof ChannelListQuerySchema>): Paged<ReturnType<ChannelsService['view']>> {
    const reach = listOrgReach(this.tenancy, ctx, query.orgId);
    if (reach === null) return paged([], query, 0);
    const shape = reach.shape + shapeOf({ t: query.type, e: query.enabled !== undefined });
    const values = { orgIds: reach.orgIds, type: query.type, enabled: query.enabled === undefined ? null : Number(query.enabled) };
    const { rows, total } = channelPageOf(this.db, shape, values, query);
    return paged(rows.map((r) => this.view(r)), query, total);
  }

  get(ctx: RequestContext, id: string) {
    return this.view(this.findVisible(ctx, id));
  }

  create(ctx: RequestContext, body: z.infer<typeof ChannelCreateSchema>) {
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    const config = unmaskConfig(body.type, body.config, {});
    assertValidConfig(body.type, config);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, notificationChannels, {
        id: newId(),
        orgId: org.id,
        name: body.name,
        type: body.type,
        configSealed: this.seal(config),
        enabled: body.enabled,
        throttleMaxPerWindow: body.throttleMaxPerWindow ?? null,
        throttleWindowSeconds: body.throttleWindowSeconds ?? 3600,
      });
      this.audit(ctx, 'alert_channel.create', row, { type: row.type, enabled: row.enabled });
      return this.view(row);
    })();
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof ChannelUpdateSchema>) {
    if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided', 'NO_UPDATES');
    return this.db.$client.transaction(() => {
      const current = this.open(this.findVisible(ctx, id));
      const changes: Partial<typeof notificationChannels.$inferInsert> = { updatedAt: new Date().toISOString() };
      if (body.name !== undefined) changes.name = body.name;
      if (body.enabled !== undefined) changes.enabled = body.enabled;
      if (body.throttleMaxPerWindow !== undefined) changes.throttleMaxPerWindow = body.throttleMaxPerWindow;
      if (body.throttleWindowSeconds !== undefined) changes.throttleWindowSeconds = body.throttleWindowSeconds;
      if (body.config !== undefined) {
        const config = unmaskConfig(current.type, body.config, current.config);
        assertValidConfig(current.type, config);
        changes.configSealed = this.seal(config);
      }
      const row = updateRow(this.db, notificationChannels, id, changes);
      if (!row) throw notFound(NOT_FOUND, 'CHANNEL_NOT_FOUND');
      const changed = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      this.audit(ctx, 'alert_channel.update', row, { changed });
      return this.view(row);
    })();
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const row = this.findVisible(ctx, id);
      deleteById(this.db, notificationChannels, id);
      this.audit(ctx, 'alert_channel.delete', row, { type: row.type });
      return { success: true as const };
    })();
  }

  /** 05-wire-notes 4.1: sends the test message; answers 200 whatever the outcome and records it on the channel. */
  async test(ctx: RequestContext, id: string) {
    const channel = this.open(this.findVisible(ctx, id));
    const org = this.tenancy.requireOrgRow(ctx, channel.orgId);
    const result: SendResult = await this.senders.send(channel.type, channel.config, {
      event: 'alert.test',
      alert: {
        alertId: randomUUID(),
        orgId: channel.orgId,
        orgName: org.name,
        ruleId: null,
        ruleName: null,
        deviceId: null,
        deviceName: null,
        severity: TEST_MESSAGE.severity,
        title: TEST_MESSAGE.title,
        message: TEST_MESSAGE.message,
        context: { source: TEST_MESSAGE.source },
        triggeredAt: new Date().toISOString(),
      },
    });
    const testedAt = new Date().toISOString();
    transaction(this.db, () => updateRow(this.db, notificationChannels, id, { lastTestedAt: testedAt, lastTestStatus: result.success ? 'success' : 'failed' }));
    return {
      channelId: channel.id,
      channelName: channel.name,
      channelType: channel.type,
      testMessage: TEST_MESSAGE,
      testResult: result,
      testedAt,
      testedBy: ctx.caller.userId,
    };
  }

  /** Enabled channels of an organization to send an alert to: the given ids (the rule's override or an escalation
   * step; ids of other organizations are ignored), or every enabled channel. Opened for the senders. */
  enabledChannels(tx: Db, orgId: string, ids: string[] | null): OpenChannel[] {
    if (ids !== null && ids.length === 0) return [];
    const queries = channelQueries(tx);
    const rows = ids === null ? queries.enabled.all({ orgId }) : queries.enabledAmong.all({ orgId, ids: JSON.stringify(ids) });
    return rows.map((r) => this.open(r));
  }

  /** One channel, opened, whatever its organization (the dispatcher; null when deleted since). */
  channelById(id: string): OpenChannel | null {
    const row = rowById(this.db, notificationChannels, id);
    return row ? this.open(row) : null;
  }

  /** Which of these ids are channels of the organization (escalation steps may name only those). */
  idsOfOrg(orgId: string, ids: string[]): Set<string> {
    return channelIdsOfOrg(this.db, orgId, ids);
  }

  private findVisible(ctx: RequestContext, id: string): ChannelRow {
    const row = rowById(this.db, notificationChannels, id);
    return visibleOr404(row, (r) => this.tenancy.requireOrg(ctx, r.orgId), () => notFound(NOT_FOUND, 'CHANNEL_NOT_FOUND'));
  }

  private audit(ctx: RequestContext, action: string, row: ChannelRow, details: Record<string, unknown>): void {
    auditOrgRow(this.db, this.tenancy, ctx, row, { action, resourceType: 'alert_channel', details });
  }
}

export type { ChannelType };
