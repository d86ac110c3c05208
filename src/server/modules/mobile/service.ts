import type { MobilePushConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import type { OutboundClient } from '../../delivery/outbound.js';
import type { AlertsService } from '../alerts/alerts-service.js';
import { MobileAlertReads } from '../alerts/mobile-inbox.js';
import type { DeviceCommandsService } from '../device-commands/service.js';
import type { DevicesService } from '../devices/service.js';
import { PendingApprovals } from '../pam/pending-approvals.js';
import type { PamService } from '../pam/service.js';
import type { ScriptsService } from '../scripts/service.js';
import { MobileActions } from './actions.js';
import { MobileApprovals } from './approvals.js';
import { MobileInbox } from './inbox.js';
import { PushDelivery } from './push.js';
import { MobileRegistration } from './registration.js';

export interface MobileDeps {
  alerts: AlertsService;
  devices: DevicesService;
  deviceCommands: DeviceCommandsService;
  /** Late-bound: both are built in the same composition step as this service. */
  scripts: () => ScriptsService;
  pam: () => PamService;
  outbound: OutboundClient;
  /** The users an alert of the organization reaches (the alert pipeline's recipients). */
  recipientsOf: (orgId: string) => string[];
}

/** The mobile interface (02 §2.10, §4.6): registration and settings, inbox and devices, actions, approvals, push. */
export class MobileService {
  readonly registration: MobileRegistration;
  readonly inbox: MobileInbox;
  readonly actions: MobileActions;
  readonly approvals: MobileApprovals;
  readonly push: PushDelivery;

  constructor(db: Db, push: MobilePushConfig, deps: MobileDeps) {
    this.registration = new MobileRegistration(db);
    this.inbox = new MobileInbox(deps.alerts, new MobileAlertReads(db), deps.devices);
    this.actions = new MobileActions(deps.devices, deps.deviceCommands, deps.scripts);
    this.approvals = new MobileApprovals(deps.pam, new PendingApprovals(db), deps.devices);
    this.push = new PushDelivery(db, push, deps.outbound, deps.recipientsOf);
  }
}
