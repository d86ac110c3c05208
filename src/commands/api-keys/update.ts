import { updateCommand } from '../../cli/resource-commands.js';
import { apiKeys } from '../../client/endpoints.js';

export default updateCommand(apiKeys.update, 'API key', {
  summary: 'Rename an active API key, or change its scopes or rate limit (needs a session with MFA)',
  examples: [
    '<%= config.bin %> api-keys update 9a2e… --name "CI pipeline (prod)"',
    '<%= config.bin %> api-keys update 9a2e… --scopes sites:read --scopes devices:read --rate-limit 5000',
  ],
  descriptions: {
    scopes:
      'Replaces every scope of the key: resource:action (e.g. sites:read), or * where the deployment accepts it (the bundled server does).',
  },
});
