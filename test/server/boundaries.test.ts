import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// Issue 10: `npm run lint` enforces the layering. Each case lints a one-line snippet as if it lived at `file`,
// with the import rules the real eslint.config.js gives that path (no type information needed for them).
const eslint = new ESLint({ cwd: process.cwd() });
const RULES = ['no-restricted-imports', 'no-restricted-syntax'];

async function violations(file: string, code: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, Linter.RuleEntry> };
  const rules = Object.fromEntries(RULES.flatMap((rule) => (config.rules?.[rule] ? [[rule, config.rules[rule]]] : [])));
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser, sourceType: 'module' }, rules }],
    { filename: file },
  );
  return messages.map((m) => m.ruleId ?? m.message);
}

const cases: [string, string, string, boolean][] = [
  ['contract imports nothing of ours', 'src/contract/x.ts', "import { a } from '../server/app.js';", false],
  ['contract imports itself and zod', 'src/contract/x.ts', "import { z } from 'zod';\nimport { b } from './common.js';", true],
  ['client knows no server', 'src/client/x.ts', "import { a } from '../server/app.js';", false],
  ['client knows no CLI', 'src/client/x.ts', "import { a } from '../cli/output.js';", false],
  ['client knows no oclif', 'src/client/x.ts', "import { Command } from '@oclif/core';", false],
  ['client reads the contract', 'src/client/x.ts', "import { a } from '../contract/endpoint.js';", true],
  ['CLI reaches the server only over HTTP', 'src/commands/orgs/list.ts', "import { a } from '../../server/app.js';", false],
  ['CLI does not load the server lazily either', 'src/cli/x.ts', "const m = await import('../server/app.js');", false],
  ['svc server … loads it lazily', 'src/commands/server/start.ts', "const m = await import('../../server/server.js');", true],
  ['svc server … not statically', 'src/commands/server/start.ts', "import { a } from '../../server/server.js';", false],
  ['modules know no http/', 'src/server/modules/x/service.ts', "import { a } from '../../http/guard.js';", false],
  ['modules know no Fastify', 'src/server/modules/x/service.ts', "import type { FastifyReply } from 'fastify';", false],
  ['modules throw domain errors', 'src/server/modules/x/service.ts', "import { notFound } from '../../errors.js';", true],
  ['route bindings know no http/', 'src/server/modules/x/routes.ts', "import { a } from '../../http/bind.js';", false],
  ['route bindings may set cookies on a reply', 'src/server/modules/x/routes.ts', "import type { FastifyReply } from 'fastify';", true],
  ['db knows no modules', 'src/server/db/schema/x.ts', "import { a } from '../../modules/pam/service.js';", false],
];

describe('issue 10: layering enforced by npm run lint', () => {
  it.each(cases)('%s (%s)', async (_name, file, code, allowed) => {
    const found = await violations(file, code);
    if (allowed) expect(found).toEqual([]);
    else expect(found.length).toBeGreaterThan(0);
  });
});
