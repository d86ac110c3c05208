import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerAuditRoutes({ route, services }: ModuleContext): void {
  const a = contract.audit;
  const { audit } = services;
  route(a.list, ({ ctx, query }) => audit.list(ctx, query));
  route(a.search, ({ ctx, query }) => audit.list(ctx, query));
  route(a.get, ({ ctx, params }) => audit.get(ctx, params.id));
  route(a.verify, ({ ctx, query }) => audit.verify(ctx, query.orgId));
  route(a.export, ({ ctx, query, reply }) => {
    const format = query.format ?? 'csv';
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    reply
      .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
      .header('content-disposition', `attachment; filename="audit-${stamp}.${format}"`)
      .header('cache-control', 'no-store');
    void reply.send(audit.exportStream(ctx, query, format));
    return undefined;
  });
}
