import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { SoftwareService } from './service.js';

/** Software catalog, deployments and device software inventory (03 §4.3). */
export function registerSoftwareRoutes({ route, services, db, worker }: ModuleContext): void {
  const c = contract.software;
  const software = new SoftwareService(db, services.devices, services.deviceCommands);
  const catalog = software.catalog;
  // The heartbeat's software list is the device's inventory.
  services.devices.onSoftwareReported = (device, items) => software.replaceDeviceSoftware(device, items);
  software.register(worker);

  route(c.createCatalogItem, ({ ctx, body }) => catalog.create(ctx, body));
  route(c.listCatalog, ({ ctx, query }) => catalog.list(ctx, query));
  route(c.searchCatalog, ({ ctx, query }) => catalog.search(ctx, query.q, query.category));
  route(c.getCatalogItem, ({ ctx, params }) => catalog.get(ctx, params.id));
  route(c.updateCatalogItem, ({ ctx, params, body }) => catalog.update(ctx, params.id, body));
  route(c.deleteCatalogItem, ({ ctx, params }) => catalog.delete(ctx, params.id));
  route(c.listVersions, ({ ctx, params }) => catalog.versions(ctx, params.id));
  route(c.createVersion, ({ ctx, params, body }) => catalog.createVersion(ctx, params.id, body));
  route(c.createDeployment, ({ ctx, body }) => software.createDeployment(ctx, body));
  route(c.listDeployments, ({ ctx, query }) => software.listDeployments(ctx, query));
  route(c.getDeployment, ({ ctx, params }) => software.getDeployment(ctx, params.id));
  route(c.cancelDeployment, ({ ctx, params, body }) => software.cancel(ctx, params.id, body.reason));
  route(c.deploymentResults, ({ ctx, params }) => software.results(ctx, params.id));
  route(c.inventory, ({ ctx, query }) => software.inventory(ctx, query));
  route(c.deviceInventory, ({ ctx, params }) => software.deviceInventory(ctx, params.deviceId));
  route(c.uninstall, ({ ctx, params, body }) => software.uninstall(ctx, params.deviceId, params.softwareId, body));
}
