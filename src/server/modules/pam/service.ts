import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import type { SecretBox } from '../../security/crypto.js';
import type { DevicesService } from '../devices/service.js';
import type { AuthService } from '../identity/auth-service.js';
import type { Directory } from '../identity/directory.js';
import type { TenancyService } from '../tenancy/service.js';
import { PamApproversService } from './approvers-service.js';
import { ElevationAuditExport } from './audit-export.js';
import { ElevationDecisions } from './decisions.js';
import { ElevationExpiry } from './expiry.js';
import { ElevationIngestService } from './ingest.js';
import { ElevationJitRequests } from './jit.js';
import { ApprovalAssurance } from './reauth.js';
import { ElevationQueries } from './requests-queries.js';
import { PamRulesService } from './rules-service.js';
import { ElevationTrail } from './trail.js';

/** Privileged elevation (01 §4.9): rules and defaults, requests (reads, agent ingest, technicians' JIT requests,
 * decisions, expiry), approver devices, the elevation audit trail and its export. */
export class PamService {
  readonly trail: ElevationTrail;
  readonly requests: ElevationQueries;
  readonly rules: PamRulesService;
  readonly approvers: PamApproversService;
  readonly ingest: ElevationIngestService;
  readonly jit: ElevationJitRequests;
  readonly decisions: ElevationDecisions;
  readonly expiry: ElevationExpiry;
  readonly exports: ElevationAuditExport;

  constructor(
    db: Db,
    config: ServerConfig,
    box: SecretBox,
    deps: { auth: AuthService; tenancy: TenancyService; devices: DevicesService; directory: Directory },
  ) {
    this.trail = new ElevationTrail(db);
    this.requests = new ElevationQueries(db, deps);
    this.rules = new PamRulesService(db, this.requests);
    this.approvers = new PamApproversService(db, {
      rpId: config.pam.webauthnRpId,
      origins: config.pam.webauthnOrigins,
    });
    this.ingest = new ElevationIngestService(db, this.trail, this.rules, deps.devices);
    this.jit = new ElevationJitRequests(db, this.trail, this.requests, deps.devices);
    const assurance = new ApprovalAssurance(db, config, box, deps.auth, deps.tenancy);
    this.decisions = new ElevationDecisions(db, this.trail, this.requests, assurance, this.approvers);
    this.expiry = new ElevationExpiry(db, this.trail);
    this.exports = new ElevationAuditExport(db, this.trail.inFlight, config.pam.exportSettleSeconds, this.requests);
  }
}
