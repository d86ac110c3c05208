import { decisionCommand } from '../../../cli/mobile-approvals.js';

export default decisionCommand('deny', 'Deny a pending elevation request');
