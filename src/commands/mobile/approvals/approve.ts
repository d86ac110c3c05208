import { decisionCommand } from '../../../cli/mobile-approvals.js';
import { mobile } from '../../../client/endpoints.js';

export default decisionCommand('approve', mobile.approve, 'Approve a pending elevation request (a refused one reads as denied with its reason)', (answer) => answer.approval);
