import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import type { SecretBox } from '../../security/crypto.js';
import type { DevicesService } from '../devices/service.js';
import type { AuthService } from '../identity/auth-service.js';
import type { TenancyService } from '../tenancy/service.js';
import { PamApproversService } from './approvers-service.js';
import { ElevationAuditExport } from './audit-export.js';
import { PamRequestsService } from './requests-service.js';
import { PamRulesService } from './rules-service.js';
import { ElevationTrail } from './trail.js';

/** Privileged elevation (01 §4.9): rules and defaults, requests and the engine, approver devices, the
 * elevation audit trail and its export. */
export class PamService {
  readonly trail: ElevationTrail;
  readonly rules: PamRulesService;
  readonly approvers: PamApproversService;
  readonly requests: PamRequestsService;
  readonly exports: ElevationAuditExport;

  constructor(
    db: Db,
    config: ServerConfig,
    box: SecretBox,
    deps: { auth: AuthService; tenancy: TenancyService; devices: DevicesService },
  ) {
    this.trail = new ElevationTrail(db);
    this.rules = new PamRulesService(db);
    this.approvers = new PamApproversService(db, {
      rpId: config.pam.webauthnRpId,
      origins: config.pam.webauthnOrigins,
    });
    this.requests = new PamRequestsService(
      db,
      config,
      box,
      this.rules,
      this.trail,
      this.approvers,
      deps.auth,
      deps.tenancy,
      deps.devices,
    );
    this.exports = new ElevationAuditExport(db, this.trail.inFlight, config.pam.exportSettleSeconds);
  }
}
