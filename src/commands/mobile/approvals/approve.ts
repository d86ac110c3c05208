import { decisionCommand } from '../../../cli/mobile-approvals.js';

export default decisionCommand('approve', 'Approve a pending elevation request (a refused one reads as denied with its reason)');
