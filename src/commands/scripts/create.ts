import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { scripts } from '../../client/endpoints.js';

const body = bodyFlags(scripts.create);

export default class ScriptsCreate extends ApiCommand<typeof ScriptsCreate> {
  static override summary = 'Create a script (needs a session with MFA)';
  static override description = `Parameters are a JSON array: [{"name":"who","type":"string","required":true}, {"name":"apiToken","secret":true}]. A plain parameter is written into the content where it says {{var.who}}; a secret one reaches the script only as the environment variable SVC_VAR_APITOKEN.`;
  static override examples = [
    '<%= config.bin %> scripts create --org-id 3b9e… --name "Disk report" --os-types linux --language bash --content "df -h"',
    '<%= config.bin %> scripts create --from-file script.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'name', 'language', 'osTypes', 'timeoutSeconds', 'runAs', 'version'];

  async run() {
    return this.call(scripts.create, { body: await this.bodyFrom(body) });
  }
}
