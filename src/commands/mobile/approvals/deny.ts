import { decisionCommand } from '../../../cli/mobile-approvals.js';
import { mobile } from '../../../client/endpoints.js';

export default decisionCommand('deny', mobile.deny, 'Deny a pending elevation request', (answer) => answer.approval);
