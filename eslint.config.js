import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** One layer's import rule: `no-restricted-imports` with one pattern per forbidden reach (README "Architecture").
 * Dynamic `import()` is not checked here: that is how `svc server …` loads the server lazily. */
const forbid = (...patterns) => ({
  'no-restricted-imports': ['error', { patterns: patterns.map(([regex, message]) => ({ regex, message })) }],
});
const SERVER = ['(^|/)server/', 'the CLI reaches the server only over HTTP (svc server … loads it lazily with import())'];
const HTTP = ['(^|/)http/', 'business rules know no HTTP: throw errors.ts, take context.ts'];
const FASTIFY = ['^(fastify|@fastify/)', 'business rules know no HTTP: the guard and route bindings deal with requests'];

/** The layering of src/ (DESIGN.md "Layout"); test/server/boundaries.test.ts proves each rule bites. */
export const boundaries = [
  { files: ['src/contract/**/*.ts'], rules: forbid(['^\\.\\./', 'the contract imports nothing of ours but itself']) },
  {
    files: ['src/client/**/*.ts'],
    rules: forbid(
      ['(^|/)(server|cli|commands|hooks)/', 'the client knows no server and no CLI'],
      ['^@oclif/', 'the client knows no oclif'],
    ),
  },
  {
    files: ['src/cli/**/*.ts', 'src/commands/**/*.ts', 'src/hooks/**/*.ts'],
    rules: {
      ...forbid(SERVER),
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/(^|\\/)server\\//]',
          message: 'only svc server … commands load the server (lazily)',
        },
      ],
    },
  },
  { files: ['src/commands/server/**/*.ts', 'src/cli/server-*.ts'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['src/server/modules/**/*.ts'], rules: forbid(HTTP, FASTIFY) },
  // Route bindings are the modules' HTTP edge: they may set cookies on a Fastify reply, not reach http/ internals.
  { files: ['src/server/modules/**/routes.ts'], rules: forbid(HTTP) },
  { files: ['src/server/db/**/*.ts'], rules: forbid(['(^|/)(modules|http)/', 'the database layer knows no modules']) },
];

export default tseslint.config(
  { ignores: ['.tmp-scratch/', 'dist/', 'node_modules/', 'drizzle/', 'coverage/', 'bin/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**/*.ts', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Tests read JSON response bodies deeply; src stays free of any.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  ...boundaries,
  prettier,
);
