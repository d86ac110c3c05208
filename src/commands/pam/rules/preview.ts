import { Flags } from '../../../cli/flags.js';
import { ApiCommand } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.previewRule;
const criteria = bodyFlags(def);
/** Fields of a rule file that say nothing about what the rule matches: dropped, so a rule file previews as is. */
const RULE_ONLY = ['name', 'priority', 'enabled'];

export default class PamRulesPreview extends ApiCommand<typeof PamRulesPreview> {
  static override summary = "Which recent elevation requests a rule's criteria would have matched (sends no change)";
  static override description = `Scans the requests of the last --window-days days (default 30) and reports how many the criteria match, their statuses, and a sample of up to ten. --from-file takes the same file as \`svc pam rules create\` (its name, priority and enabled are ignored); flags override its fields.`;
  static override examples = [
    '<%= config.bin %> pam rules preview --org-id 3b9e… --match-signer "Vendor Inc"',
    '<%= config.bin %> pam rules preview --from-file rule.yaml --window-days 90',
    '<%= config.bin %> pam rules preview --org-id 3b9e… --match-tool-name execute_command --match-risk-tier 3 --output json',
  ];
  static override flags = {
    ...criteria.flags,
    'from-file': Flags.string({
      summary: 'JSON or YAML rule file (as for `pam rules create`); flags override its fields.',
    }),
  };

  async run() {
    const body = Object.fromEntries(
      Object.entries(await this.bodyFrom(criteria)).filter(([key]) => !RULE_ONLY.includes(key)),
    );
    return this.call(def, { body: body });
  }
}
