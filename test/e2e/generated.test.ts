import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const REPO = path.join(import.meta.dirname, '..', '..');
const FILES = ['src/client/endpoints.ts', 'oclif.manifest.json', 'docs/commands.md', 'docs/openapi.json', 'docs/command-results.json'];

/** STYLE.md habit 7: the manifest, the command reference, the OpenAPI document and the client's endpoints are
 * generated and committed; a stale one fails here. bin/run.js trusts the manifest, so a stale one breaks commands. */
describe('generated files are up to date', () => {
  let out: string;
  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-generated-'));
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'generate.js'), '--out', out, '--root', ROOT], { stdio: ['ignore', 'ignore', 'pipe'] });
    // The command results are read by the TypeScript compiler from src/: some 20 s alone, more beside other tests.
  }, 180_000);
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  for (const file of FILES) {
    it(`${file} matches the commands and the contract (run npm run generate)`, () => {
      const committed = path.join(REPO, file);
      expect(fs.existsSync(committed), `${file} is missing: run npm run generate`).toBe(true);
      const fresh = fs.readFileSync(path.join(out, file), 'utf8');
      const current = fs.readFileSync(committed, 'utf8');
      expect(current === fresh, `${file} is stale: run npm run generate`).toBe(true);
    });
  }

  it('the manifest carries the package version and no absolute paths', () => {
    const text = fs.readFileSync(path.join(out, 'oclif.manifest.json'), 'utf8');
    const pjson = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    expect(JSON.parse(text).version).toBe(pjson.version);
    for (const absolute of [REPO, ROOT, os.tmpdir(), os.homedir()]) expect(text).not.toContain(absolute);
  });
});
