import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerTenancyRoutes({ route, services }: ModuleContext): void {
  const t = contract.tenancy;
  const tenancy = services.tenancy;
  route(t.listPartners, ({ query }) => tenancy.listPartners(query));
  route(t.createPartner, ({ ctx, body }) => tenancy.createPartner(ctx, body));
  route(t.getMyPartner, ({ ctx }) => tenancy.myPartner(ctx));
  route(t.updateMyPartner, ({ ctx, body }) => tenancy.updatePartner(ctx, tenancy.myPartner(ctx).id, body));
  route(t.getPartner, ({ params }) => tenancy.getPartner(params.id));
  route(t.updatePartner, ({ ctx, params, body }) => tenancy.updatePartner(ctx, params.id, body));
  route(t.deletePartner, ({ ctx, params }) => tenancy.deletePartner(ctx, params.id));
  route(t.listAccessibleOrganizations, ({ ctx }) => ({ data: tenancy.listAccessibleOrganizations(ctx) }));
  route(t.listOrganizations, ({ ctx, query }) => tenancy.listOrganizations(ctx, query));
  route(t.createOrganization, ({ ctx, body }) => tenancy.createOrganization(ctx, body));
  route(t.getOrganization, ({ ctx, params }) => tenancy.getOrganization(ctx, params.id));
  route(t.updateOrganization, ({ ctx, params, body }) => tenancy.updateOrganization(ctx, params.id, body));
  route(t.deleteOrganization, ({ ctx, params }) => tenancy.deleteOrganization(ctx, params.id));
  route(t.listSites, ({ ctx, query }) => tenancy.listSites(ctx, query));
  route(t.createSite, ({ ctx, body }) => tenancy.createSite(ctx, body));
  route(t.getSite, ({ ctx, params }) => tenancy.getSite(ctx, params.id));
  route(t.updateSite, ({ ctx, params, body }) => tenancy.updateSite(ctx, params.id, body));
  route(t.deleteSite, ({ ctx, params }) => tenancy.deleteSite(ctx, params.id));
}
