import { createCommand } from '../../../cli/resource-commands.js';
import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default createCommand(pam.createRule, {
  summary: 'Create an elevation rule, from flags or from a JSON or YAML file (needs a session with MFA)',
  description: `A rule needs a name and at least one identifying criterion (a time window alone is refused); executable criteria (signer, hash, path, parent image, command line, user, directory group) and tool-action criteria (tool name, risk tier) cannot be mixed. --from-file supplies the whole body; flags override its fields. Preview what a rule would match first with \`svc pam rules preview\`.`,
  examples: [
    '<%= config.bin %> pam rules create --org-id 3b9e… --name "Vendor installer" --verdict auto_approve --match-hash 9f86d0…',
    '<%= config.bin %> pam rules create --from-file rule.yaml',
    '<%= config.bin %> pam rules create --from-file rule.yaml --priority 10 --dry-run',
    `<%= config.bin %> pam rules create --org-id 3b9e… --name "Office hours" --match-signer "Vendor Inc" --time-window '{"start":"08:00","end":"18:00","days":[1,2,3,4,5]}'`,
  ],
  columns: RULE_COLUMNS,
  descriptions: {
    name: 'Name of the rule (1-255 characters).',
    verdict: 'What a matching request gets (default require_approval; ignore is invalid for tool-action rules).',
    priority: 'Lower runs first (default 100).',
    enabled: 'Whether the engine uses the rule (default true).',
    timeWindow: 'When the rule applies: {"start":"08:00","end":"18:00","days":[1,2,3,4,5],"timezone":"Europe/Berlin"}.',
    matchNegate:
      'Criteria to invert: signer, signerGroup, hash, pathGlob, parentImage, commandLine, user, adGroup, toolName, riskTier.',
  },
  pick: (answer) => answer.rule,
});
