import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's template data dirs live (test/helpers/template.ts). */
    svcTemplateRoot: string;
  }
}

/** One directory of template data dirs for the whole run, shared by every worker, removed at the end. */
export default function setup(project: TestProject): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-templates-'));
  project.provide('svcTemplateRoot', root);
  return () => fs.rmSync(root, { recursive: true, force: true });
}
