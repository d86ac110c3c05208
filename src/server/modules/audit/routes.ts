import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerAuditRoutes({ route, services }: ModuleContext): void {
  const a = contract.audit;
  const { audit } = services;
  route(a.list, ({ ctx, query }) => audit.list(ctx, query));
  route(a.listAll, ({ ctx, query }) => audit.list(ctx, query));
  route(a.search, ({ ctx, query }) => audit.search(ctx, query));
  route(a.get, ({ ctx, params }) => audit.get(ctx, params.id));
  route(a.reportUserActivity, ({ ctx, query }) => audit.userActivityReport(ctx, query));
  route(a.reportSecurityEvents, ({ ctx, query }) => audit.securityReport(ctx, query));
  route(a.reportCompliance, ({ ctx, query }) => audit.complianceReport(ctx, query));
  route(a.stats, ({ ctx, query }) => audit.stats(ctx, query));
  route(a.verify, ({ ctx, query }) => audit.verify(ctx, query.orgId));
  route(a.export, ({ ctx, query, reply }) => {
    const { format: asked, columns, includeDetails, ...filter } = query;
    const format = asked ?? 'csv';
    // Building the stream checks the caller's reach (a denied export throws here and is not recorded); rows
    // are read only as the response drains, so the export's own entry is part of what it exports.
    const stream = audit.exportStream(ctx, filter, format, { columns, includeDetails });
    audit.recordExport(ctx, query, format);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    reply
      .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
      .header('content-disposition', `attachment; filename="audit-${stamp}.${format}"`)
      .header('cache-control', 'no-store')
      // Every matching row, however many: said, so a client does not take a long export for a capped one.
      .header('x-truncated', 'false');
    void reply.send(stream);
    return undefined;
  });
}
