import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fullPath, type EndpointDef } from '../../contract/endpoint.js';

/** A check on the client's address that throws to refuse the request. */
export type Admit = (ip: string | null) => void;

/** Runs each endpoint's admission check when its request arrives, before the body is parsed or validated
 * (registration: the feature flag and the per-IP limit answer whatever was sent). */
export function installAdmission(
  app: FastifyInstance,
  clientIp: (request: FastifyRequest) => string | null,
  checks: readonly [EndpointDef, Admit][],
): void {
  const byRoute = new Map(checks.map(([def, admit]) => [`${def.method} ${fullPath(def)}`, admit]));
  app.addHook('onRequest', async (request) => {
    byRoute.get(`${request.method} ${request.routeOptions.url ?? ''}`)?.(clientIp(request));
  });
}
