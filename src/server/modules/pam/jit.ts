import type { z } from 'zod';
import type { TechJitRequestSchema } from '../../../contract/pam.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { badRequest, forbidden } from '../../errors.js';
import type { DevicesService } from '../devices/service.js';
import type { ElevationQueries, ElevationView } from './requests-queries.js';
import { insertRequest, recordTransition } from './transitions.js';
import type { ElevationTrail } from './trail.js';

/** Technicians' just-in-time requests for administrator rights on a device (01 §4.9). */
export class ElevationJitRequests {
  constructor(
    private readonly db: Db,
    private readonly trail: ElevationTrail,
    private readonly queries: ElevationQueries,
    private readonly devices: DevicesService,
  ) {}

  /** Always pending: no rule auto-approves (or auto-denies) a person's own request for administrator rights;
   * an approver decides. */
  requestJit(ctx: RequestContext, body: z.infer<typeof TechJitRequestSchema>): ElevationView {
    const { caller } = ctx;
    if (!caller.userId) throw forbidden('A user session is required', 'SESSION_REQUIRED');
    const device = this.devices.findVisible(ctx, body.deviceId);
    if (device.status === 'decommissioned') throw badRequest('Device is decommissioned', 'DEVICE_DECOMMISSIONED');
    const id = this.trail.write((recordedAt, append) => {
      const row = insertRequest(this.db, device, recordedAt, {
        flowType: 'tech_jit_admin',
        status: 'pending',
        subjectUsername: caller.email,
        subjectUserId: caller.userId,
        requesterUserId: caller.userId,
        reason: body.reason,
        requestedDurationMinutes: body.durationMinutes ?? null,
        observedAt: recordedAt,
      });
      const requestedDurationMinutes = row.requestedDurationMinutes;
      recordTransition(
        this.db,
        ctx,
        append,
        row,
        {
          trail: {
            eventType: 'requested',
            actor: 'technician',
            actorUserId: caller.userId,
            details: { flowType: row.flowType, reason: row.reason, requestedDurationMinutes },
          },
          audit: {
            action: 'pam.elevation_request.create',
            details: { flowType: row.flowType, deviceId: row.deviceId, requestedDurationMinutes },
          },
        },
        device.hostname,
      );
      return row.id;
    });
    return this.queries.get(ctx, id);
  }
}
