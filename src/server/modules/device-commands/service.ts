import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { AgentCommandQuerySchema, AgentCommandResultSchema } from '../../../contract/agent-commands.js';
import type { DeviceCommandCreateSchema, DeviceCommandListQuerySchema } from '../../../contract/device-commands.js';
import type { Db } from '../../db/connection.js';
import { deviceCommands } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import { inJson, insertRow, preparedQueries, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { countWrites, type WatchedTable } from '../../db/write-counter.js';
import { ReadCache } from '../../lib/read-cache.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import { covers } from '../roles/permissions.js';
import type { DevicesService } from '../devices/service.js';

export type CommandRow = typeof deviceCommands.$inferSelect;
export type CommandType = CommandRow['type'];

/** What another module (scripts) is told about the commands of a type it queued, inside the same transaction. */
export interface CommandListener {
  /** The agent fetched the command (it is `sent`). */
  delivered?(command: CommandRow): void;
  /** The agent reported a result; the row holds it, with every secret value already masked. */
  finished?(command: CommandRow): void;
}

export interface QueueCommand {
  orgId: string;
  deviceId: string;
  type: CommandType;
  payload: Record<string, unknown>;
  /** Environment variables delivered to the agent only (sealed at rest, masked in every result). */
  secretEnv?: Record<string, string>;
  createdBy: string | null;
}

/** What replaces a secret value found in a command's output. */
export const REDACTED = '[REDACTED]';
const TERMINAL: readonly CommandRow['status'][] = ['completed', 'failed', 'cancelled', 'timeout'];
/** The statuses of a command not yet finished. */
const OPEN: readonly CommandRow['status'][] = ['pending', 'sent'];
const POLL_MS = 250;

const isoNow = () => new Date().toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Replaces every occurrence of each secret value (longest first, so a value containing another goes whole). */
export function maskSecrets(text: string | undefined, secrets: readonly string[]): string | null {
  if (text === undefined) return null;
  let out = text;
  for (const secret of [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * The writes of commands whose shape is fixed, prepared once per database (db/prepared.ts): the open commands of
 * `deviceId` cancelled, the commands of the JSON array `ids` handed out (sent), the command `id` ended with
 * `status` while still open; each at `now`, its sealed secrets dropped when it ends.
 */
const commandWrites = preparedQueries((db) => {
  const now = sql`${sql.placeholder('now')}`;
  const open = inArray(deviceCommands.status, [...OPEN]);
  return {
    cancelOpenOf: db
      .update(deviceCommands)
      .set({ status: 'cancelled', secretEnv: null, completedAt: now, updatedAt: now })
      .where(and(eq(deviceCommands.deviceId, sql.placeholder('deviceId')), open))
      .prepare(),
    handOut: db
      .update(deviceCommands)
      .set({ status: 'sent', sentAt: now, updatedAt: now })
      .where(inJson(deviceCommands.id, 'ids'))
      .returning()
      .prepare(),
    closeOpen: db
      .update(deviceCommands)
      .set({ status: sql`${sql.placeholder('status')}`, secretEnv: null, completedAt: now, updatedAt: now })
      .where(and(eq(deviceCommands.id, sql.placeholder('id')), open))
      .prepare(),
  };
});

/**
 * Ends every command of a device not yet finished (pending or sent → cancelled, its sealed secrets dropped), inside
 * the caller's transaction: the devices module's decommission, after which no agent can fetch or report them.
 * Answers how many ended. Their listeners are not told: the scripts module ends its runs of the device itself
 * (cancelActiveExecutionsOf).
 */
export function cancelOpenCommandsOf(db: Db, deviceId: string): number {
  return commandWrites(db).cancelOpenOf.run({ deviceId, now: isoNow() }).changes;
}

/** A page of a device's commands (placeholder `deviceId`), prepared once per database and shape (lib/prepared-page.ts):
 * 's' of one `status` only. */
const commandPageOf = preparedPages(deviceCommands, [desc(deviceCommands.createdAt), desc(deviceCommands.id)], (shape) =>
  and(
    eq(deviceCommands.deviceId, sql.placeholder('deviceId')),
    ...shapeConditions(shape, { s: () => eq(deviceCommands.status, sql.placeholder('status')) }),
  ),
);

/** What an agent's poll reads (the hottest read of an agent), prepared once per database. */
const commandQueries = preparedQueries((db) => {
  const pendingOfDevice = and(eq(deviceCommands.deviceId, sql.placeholder('deviceId')), eq(deviceCommands.status, 'pending'));
  return {
    pendingOf: db
      .select()
      .from(deviceCommands)
      .where(pendingOfDevice)
      .orderBy(asc(deviceCommands.createdAt), asc(deviceCommands.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
    anyPending: db.select({ id: deviceCommands.id }).from(deviceCommands).where(pendingOfDevice).limit(1).prepare(),
    // An agent's report names a command of its own device.
    ofDevice: rowQuery(db, deviceCommands, and(eq(deviceCommands.id, sql.placeholder('id')), eq(deviceCommands.deviceId, sql.placeholder('deviceId')))),
  };
});

/** The writes that can give a device a pending command (db/write-counter.ts): a command queued or deleted, a
 * command's status or device changed. Writes by another connection drop every kept answer (lib/read-cache.ts). */
const PENDING_WRITES: readonly WatchedTable[] = [{ table: 'device_commands', columns: ['status', 'device_id'] }];

/** How many devices' "nothing pending" answers are kept. */
const KEPT_DEVICES = 4096;

/** The device of the agent calling: the guard has matched its token to the path's agent (01 §5.13), and a
 * decommissioned device's token no longer authenticates. */
function ownDevice(ctx: RequestContext, agentId: string): string {
  const { caller } = ctx;
  if (caller.kind !== 'agent' || caller.agentId !== agentId || caller.deviceId === null) throw notFound('Agent not found');
  return caller.deviceId;
}

/**
 * Commands for a device's agent (03 §4.7, 05 wire notes 4.7): queued by users (`POST /devices/:id/commands`) or
 * by modules (script runs), fetched by the agent with its token, their results reported back. Durable: a command
 * waits in its table until the agent fetches it, however long the device is offline.
 */
export class DeviceCommandsService {
  private readonly listeners = new Map<CommandType, CommandListener>();
  /** Whether a device has a pending command, by device id, kept until a command is queued or changes status:
   * most polls of most agents find nothing, and then read no table. */
  private readonly hasPending: ReadCache<boolean>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly devices: DevicesService,
  ) {
    this.hasPending = new ReadCache<boolean>(db.$client, KEPT_DEVICES, Infinity, countWrites(db.$client, 'pending_commands', PENDING_WRITES));
  }

  /** Registers the module that owns commands of `type` (one per type). */
  on(type: CommandType, listener: CommandListener): void {
    this.listeners.set(type, listener);
  }

  create(ctx: RequestContext, deviceId: string, body: z.infer<typeof DeviceCommandCreateSchema>) {
    if (body.type === 'script') throw badRequest('Script commands must be executed through the scripts endpoint', 'SCRIPT_COMMAND_NOT_ALLOWED');
    return this.db.$client.transaction(() => {
      const device = this.devices.findVisible(ctx, deviceId);
      if (device.status === 'decommissioned') throw badRequest('Cannot send commands to a decommissioned device', 'DEVICE_DECOMMISSIONED');
      const row = this.queue({ orgId: device.orgId, deviceId, type: body.type, payload: body.payload ?? {}, createdBy: ctx.caller.userId });
      recordAudit(this.db, ctx, {
        action: 'device.command',
        resourceType: 'device',
        resourceId: device.id,
        resourceName: device.hostname,
        orgId: device.orgId,
        partnerId: device.partnerId,
        details: { commandId: row.id, type: row.type },
      });
      return { id: row.id, deviceId: row.deviceId, type: row.type, status: row.status, createdAt: row.createdAt };
    })();
  }

  /** Queues a command; run inside the caller's transaction. The device's state is the caller's to check. */
  queue(input: QueueCommand): CommandRow {
    const secretEnv = input.secretEnv && Object.keys(input.secretEnv).length > 0 ? this.box.seal(JSON.stringify(input.secretEnv)) : null;
    return insertRow(this.db, deviceCommands, { orgId: input.orgId, deviceId: input.deviceId, type: input.type, payload: input.payload, secretEnv, createdBy: input.createdBy });
  }

  list(ctx: RequestContext, deviceId: string, query: z.infer<typeof DeviceCommandListQuerySchema>): Paged<ReturnType<typeof shown>> {
    this.devices.findVisible(ctx, deviceId);
    const { rows, total } = commandPageOf(this.db, shapeOf({ s: query.status }), { deviceId, status: query.status }, query);
    const readsScripts = covers(ctx.caller.permissions, 'scripts:read');
    return paged(rows.map((row) => shown(row, readsScripts)), query, total);
  }

  /** The agent's fetch: its pending commands, oldest first, marked sent; waits up to `wait` seconds for one. */
  async fetchForAgent(ctx: RequestContext, agentId: string, query: z.infer<typeof AgentCommandQuerySchema>) {
    const deviceId = ownDevice(ctx, agentId);
    const deadline = Date.now() + (query.wait ?? 0) * 1000;
    for (;;) {
      const handed = this.handOut(deviceId, query.limit ?? 10);
      if (handed.length > 0 || Date.now() + POLL_MS > deadline) return { commands: handed };
      await sleep(POLL_MS);
    }
  }

  private handOut(deviceId: string, limit: number) {
    // Most polls find nothing: a kept answer or a plain read answers those without a transaction; the
    // transaction reads again.
    let waiting = this.hasPending.lookup(deviceId);
    if (waiting === undefined) {
      waiting = this.hasPending.store(deviceId, commandQueries(this.db).anyPending.get({ deviceId }) !== undefined);
    }
    if (!waiting) return [];
    return this.db.$client.transaction(() => {
      const pending = commandQueries(this.db).pendingOf.all({ deviceId, limit });
      if (pending.length === 0) return [];
      const sent = commandWrites(this.db).handOut.all({ ids: JSON.stringify(pending.map((c) => c.id)), now: isoNow() });
      const byId = new Map(sent.map((c) => [c.id, c]));
      return pending.map((before) => {
        const command = byId.get(before.id) ?? before;
        this.listeners.get(command.type)?.delivered?.(command);
        return { id: command.id, type: command.type, payload: command.payload, env: this.secretEnvOf(command), createdAt: command.createdAt };
      });
    })();
  }

  /** The agent's report. Secret values are masked out of the output before anything is stored. */
  reportResult(ctx: RequestContext, agentId: string, commandId: string, body: z.infer<typeof AgentCommandResultSchema>): { success: true } {
    const deviceId = ownDevice(ctx, agentId);
    return this.db.$client.transaction(() => {
      const command = commandQueries(this.db).ofDevice.get({ id: commandId, deviceId });
      if (!command) throw notFound('Command not found');
      if (TERMINAL.includes(command.status)) throw conflict(`Command is already ${command.status}`, 'COMMAND_FINISHED');
      const secrets = Object.values(this.secretEnvOf(command));
      const now = isoNow();
      const done = updateRow(this.db, deviceCommands, command, {
        status: body.status,
        exitCode: body.exitCode ?? null,
        stdout: maskSecrets(body.stdout, secrets),
        stderr: maskSecrets(body.stderr, secrets),
        errorMessage: maskSecrets(body.error, secrets),
        // The secret served its purpose: it is not kept past the command's end.
        secretEnv: null,
        sentAt: command.sentAt ?? now,
        completedAt: now,
        updatedAt: now,
      });
      // Read in this transaction: always there.
      if (!done) throw notFound('Command not found');
      this.listeners.get(done.type)?.finished?.(done);
      return { success: true as const };
    })();
  }

  /** Ends a command that has not finished (cancel, timeout); run inside the caller's transaction. An agent's
   * later report of it is refused (409). Returns whether it was still open. */
  close(commandId: string, status: 'cancelled' | 'timeout'): boolean {
    return commandWrites(this.db).closeOpen.run({ id: commandId, status, now: isoNow() }).changes > 0;
  }

  private secretEnvOf(command: CommandRow): Record<string, string> {
    if (!command.secretEnv) return {};
    return JSON.parse(this.box.open(command.secretEnv)) as Record<string, string>;
  }
}

/** A command as users see it: no sealed secret, no output (script output is on the script execution). A script
 * command's payload holds the script's content with its parameters filled: only a caller who may read scripts
 * (scripts:read) sees it; others see which run and script it is (05 wire notes "4.7"). */
function shown(row: CommandRow, readsScripts: boolean) {
  const { secretEnv: _secret, stdout: _out, stderr: _err, ...rest } = row;
  if (row.type !== 'script' || readsScripts) return rest;
  const { executionId, scriptId } = row.payload;
  return { ...rest, payload: { executionId, scriptId } };
}
