import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerTenancyRoutes({ route, services }: ModuleContext): void {
  const t = contract.tenancy;
  const tenancy = services.tenancy;
  route(t.listPartners, ({ query }) => tenancy.listPartners(query));
  bindCalls(route, t, tenancy, ['createPartner', 'updatePartner', 'deletePartner']);
  route(t.getMyPartner, ({ ctx }) => tenancy.myPartner(ctx));
  route(t.updateMyPartner, ({ ctx, body }) => tenancy.updatePartner(ctx, tenancy.myPartner(ctx).id, body));
  route(t.getPartner, ({ params }) => tenancy.getPartner(params.id));
  route(t.listAccessibleOrganizations, ({ ctx }) => ({ data: tenancy.listAccessibleOrganizations(ctx) }));
  bindCalls(route, t, tenancy, [
    'listOrganizations',
    'createOrganization',
    'getOrganization',
    'updateOrganization',
    'deleteOrganization',
  ]);
  bindCalls(route, t, tenancy, ['listSites', 'createSite', 'getSite', 'updateSite', 'deleteSite']);
}
