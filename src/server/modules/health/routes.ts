import { contract } from '../../../contract/index.js';
import { buildOpenApi } from '../../../contract/openapi.js';
import type { ModuleContext } from '../../app-context.js';
import { VERSION } from '../../version.js';

const startedAt = Date.now();

export function registerHealthRoutes({ route, db, config }: ModuleContext): void {
  const h = contract.health;
  route(h.live, () => ({ status: 'ok' as const, version: VERSION, uptime: Math.round((Date.now() - startedAt) / 1000) }));
  route(h.ready, ({ reply }) => {
    let database = 'ok';
    try {
      db.$client.prepare('SELECT 1').get();
    } catch (err) {
      database = err instanceof Error ? err.message : 'error';
    }
    const ready = database === 'ok';
    void reply.code(ready ? 200 : 503);
    return { status: ready ? ('ready' as const) : ('not_ready' as const), checks: { database } };
  });
  route(h.config, () => ({
    registration: { enabled: config.features.registration },
    mfa: { enabled: config.features.mfa },
  }));
  let document: Record<string, unknown> | undefined;
  const openapi = () => (document ??= buildOpenApi(contract, VERSION));
  route(h.openapi, openapi);
  route(h.openapiDocs, openapi);
}
