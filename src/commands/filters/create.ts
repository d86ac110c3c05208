import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { filters } from '../../client/endpoints.js';

const body = bodyFlags(filters.create, {
  descriptions: { conditions: 'The condition tree: {"operator":"AND","conditions":[{"field":"osType","operator":"equals","value":"windows"}]}.' },
});

export default class FiltersCreate extends ApiCommand<typeof FiltersCreate> {
  static override summary = 'Save a device filter (needs a session with MFA)';
  static override description = 'Fields and operators: see the API notes ("Saved filters and search"). Partner and system callers give --org-id. --from-file supplies the whole body.';
  static override examples = [
    `<%= config.bin %> filters create --org-id 3b9e… --name "Stale Windows" --conditions '{"operator":"AND","conditions":[{"field":"osType","operator":"equals","value":"windows"},{"field":"lastSeenAt","operator":"notWithinLast","value":{"amount":3,"unit":"days"}}]}'`,
    '<%= config.bin %> filters create --from-file filter.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'name', 'orgId', 'description', 'createdAt', 'updatedAt'];

  async run() {
    return (await this.call(filters.create, { body: await this.bodyFrom(body) })).data;
  }
}
