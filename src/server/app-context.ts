import type { FastifyInstance } from 'fastify';
import type { EndpointDef } from '../contract/endpoint.js';
import type { ServerConfig } from './config.js';
import type { Db } from './db/connection.js';
import type { Handler } from './http/bind.js';
import type { JobWorker } from './jobs/queue.js';
import type { AuditService } from './modules/audit/service.js';
import type { AuthService } from './modules/identity/auth-service.js';
import type { SessionService } from './modules/identity/sessions.js';
import type { TenancyService } from './modules/tenancy/service.js';
import type { SecretBox } from './security/crypto.js';
import type { ServerSecrets } from './security/server-secrets.js';
import type { TokenSigner } from './security/tokens.js';

/** The services of every module, created once per app. A module reaches another only through these. */
export interface Services {
  tenancy: TenancyService;
  sessions: SessionService;
  auth: AuthService;
  audit: AuditService;
}

/** What a module's route registration receives. */
export interface ModuleContext {
  app: FastifyInstance;
  config: ServerConfig;
  db: Db;
  secrets: ServerSecrets;
  box: SecretBox;
  signer: TokenSigner;
  worker: JobWorker;
  services: Services;
  /** Binds one contract endpoint to its handler (http/bind.ts). */
  route: <E extends EndpointDef>(def: E, handler: Handler<E>) => void;
}
