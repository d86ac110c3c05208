import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerEnrollmentKeyRoutes({ route, services }: ModuleContext): void {
  bindCalls(route, contract.enrollmentKeys, services.enrollmentKeys, ['list', 'create', 'get', 'rotate', 'delete']);
}
