import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.createRule;
const body = bodyFlags(def, {
  descriptions: {
    name: 'Name of the rule (1-255 characters).',
    verdict: 'What a matching request gets (default require_approval; ignore is invalid for tool-action rules).',
    priority: 'Lower runs first (default 100).',
    enabled: 'Whether the engine uses the rule (default true).',
    timeWindow: 'When the rule applies: {"start":"08:00","end":"18:00","days":[1,2,3,4,5],"timezone":"Europe/Berlin"}.',
    matchNegate:
      'Criteria to invert: signer, signerGroup, hash, pathGlob, parentImage, commandLine, user, adGroup, toolName, riskTier.',
  },
});

export default class PamRulesCreate extends ApiCommand<typeof PamRulesCreate> {
  static override summary =
    'Create an elevation rule, from flags or from a JSON or YAML file (needs a session with MFA)';
  static override description = `A rule needs a name and at least one identifying criterion (a time window alone is refused); executable criteria (signer, hash, path, parent image, command line, user, directory group) and tool-action criteria (tool name, risk tier) cannot be mixed. --from-file supplies the whole body; flags override its fields. Preview what a rule would match first with \`svc pam rules preview\`.`;
  static override examples = [
    '<%= config.bin %> pam rules create --org-id 3b9e… --name "Vendor installer" --verdict auto_approve --match-hash 9f86d0…',
    '<%= config.bin %> pam rules create --from-file rule.yaml',
    '<%= config.bin %> pam rules create --from-file rule.yaml --priority 10 --dry-run',
    `<%= config.bin %> pam rules create --org-id 3b9e… --name "Office hours" --match-signer "Vendor Inc" --time-window '{"start":"08:00","end":"18:00","days":[1,2,3,4,5]}'`,
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    return (await this.call(def, { body: await this.bodyFrom(body) })).rule;
  }
}
