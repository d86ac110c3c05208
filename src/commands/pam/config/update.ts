import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { CONFIG_COLUMNS } from '../../../cli/pam-command.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.putConfig;
const body = bodyFlags(def, {
  descriptions: {
    defaultApprovalDurationMinutes:
      'How long an auto-approval lasts when the matching rule sets no duration, 1-1440 minutes ("null": 15).',
  },
});

export default class PamConfigUpdate extends ApiCommand<typeof PamConfigUpdate> {
  static override summary =
    "Change an organization's elevation defaults (needs a session with MFA and pam:manage_policy)";
  static override description = `Only the fields given change: the server's PUT needs the unmatched verdict, so when --default-unmatched-verdict is left out the current one is read first and sent back unchanged.`;
  static override examples = [
    '<%= config.bin %> pam config update --org-id 3b9e… --default-unmatched-verdict auto_deny',
    '<%= config.bin %> pam config update --org-id 3b9e… --default-approval-duration-minutes 30',
  ];
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = CONFIG_COLUMNS;

  async run() {
    const fields = await this.bodyFrom(body);
    const changes = Object.keys(fields).filter((key) => key !== 'orgId');
    if (changes.length === 0)
      throw new UsageError(
        'Nothing to change: give --default-unmatched-verdict or --default-approval-duration-minutes',
      );
    if (fields.defaultUnmatchedVerdict === undefined) {
      const orgId = typeof fields.orgId === 'string' ? fields.orgId : undefined;
      const current = await this.call(pam.getConfig, { query: orgId === undefined ? {} : { orgId } });
      fields.defaultUnmatchedVerdict = current.config.defaultUnmatchedVerdict;
    }
    return (await this.call(def, { body: fields })).config;
  }
}
