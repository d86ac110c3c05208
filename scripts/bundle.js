#!/usr/bin/env node
// Bundles the built CLI (run after tsc; `npm run build` does both): every command and hook in dist/ is rewritten
// in place as a bundle of the code tsc emitted, its shared parts in dist/chunks/. A command then loads a few
// files instead of the hundreds that zod and src/cli are made of, which is most of the cost of loading
// them on Node 20 (no compile cache for ES modules).
//
// Left as they are: the `server` commands and dist/server (`svc server …` runs the server from tsc's files, so
// nothing of it changes), @oclif/* (one instance of the framework, shared with its plugins and bin/run.js), and
// every package not in BUNDLED: they load from node_modules on first use, as before. Plain .js files of src/ (the
// WAL checkpoint worker) are copied beside tsc's output.
//
// Two rules, kept by failing the build: commands other than `svc server …` never import server code; and what a
// command loads to start (its static imports, followed through every chunk) holds neither zod nor src/contract.
// Commands take the contract as data from src/client/endpoints.ts (scripts/generate.js writes it) and load zod
// with `await import()` only where a schema is needed (dry-run input, `validate: true`, the export window).
/* global process */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const SERVER = path.join(DIST, 'server') + path.sep;
const CONTRACT = path.join(DIST, 'contract') + path.sep;

/** The packages a command loads on every run: plain JavaScript, no files of their own. */
const BUNDLED = new Set(['zod', 'env-paths', 'is-safe-filename', 'd3-dsv']);

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function jsFiles(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => path.join(e.parentPath, e.name));
}

// Plain JavaScript files in src/ (tsc, without allowJs, emits none of them): the WAL checkpoint worker thread
// (src/server/db/checkpoint-worker.js, loaded by path from beside db/checkpoint.ts, since Node 20 runs no
// TypeScript in a worker). Copied to the same place under dist/.
const SRC = path.join(ROOT, 'src');
const plain = jsFiles(SRC);
for (const file of plain) {
  const target = path.join(DIST, path.relative(SRC, file));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(file, target);
}
if (!plain.some((file) => file.endsWith(path.join('server', 'db', 'checkpoint-worker.js'))))
  throw new Error('src/server/db/checkpoint-worker.js is missing: the server could not start its checkpoint thread');

const entryPoints = [...jsFiles(path.join(DIST, 'commands')), ...jsFiles(path.join(DIST, 'hooks'))].filter(
  (file) => !file.startsWith(path.join(DIST, 'commands', 'server') + path.sep),
);
if (entryPoints.length === 0) throw new Error('nothing to bundle in dist/: run tsc first');

fs.rmSync(path.join(DIST, 'chunks'), { recursive: true, force: true });
const { metafile } = await build({
  entryPoints,
  metafile: true,
  outdir: DIST,
  outbase: DIST,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [
    {
      name: 'svc-externals',
      setup(b) {
        // Bare package names; `#…` are a bundled package's own subpath imports, resolved by esbuild.
        b.onResolve({ filter: /^[^./#]/ }, (args) => {
          if (args.path.startsWith('node:') || !BUNDLED.has(packageName(args.path))) return { external: true };
          return undefined;
        });
        // The issue's rule, kept by the build: commands other than `svc server …` never load server code.
        b.onResolve({ filter: /^\./ }, (args) => {
          if (path.resolve(args.resolveDir, args.path).startsWith(SERVER))
            throw new Error(`${path.relative(ROOT, args.importer)} imports server code (${args.path})`);
          return undefined;
        });
      },
    },
  ],
});
/** zod, whether bundled (an input under node_modules/zod) or left external. */
const isZod = (file) => /(^|\/)node_modules\/zod\//.test(file) || packageName(file) === 'zod';

/** What a command loads before it runs: the outputs reached from it by import statements, not by import(). */
function loadedAtStart(output) {
  const seen = new Set([output]);
  for (const file of seen)
    for (const edge of metafile.outputs[file]?.imports ?? [])
      if (edge.kind !== 'dynamic-import' && !edge.external) seen.add(edge.path);
  return seen;
}

const commands = new Set(entryPoints);
const offences = [];
let checked = 0;
for (const [output, meta] of Object.entries(metafile.outputs)) {
  // import() targets are entry points to esbuild too: only the commands and hooks are checked.
  if (!meta.entryPoint || !commands.has(path.resolve(meta.entryPoint))) continue;
  checked++;
  const bad = [...loadedAtStart(output)].flatMap((file) => [
    ...Object.keys(metafile.outputs[file].inputs).filter(
      (input) => isZod(input) || path.resolve(input).startsWith(CONTRACT),
    ),
    ...metafile.outputs[file].imports
      .filter((e) => e.external && e.kind !== 'dynamic-import' && isZod(e.path))
      .map((e) => e.path),
  ]);
  if (bad.length > 0) offences.push(`${output} loads ${bad[0]}${bad.length > 1 ? ` and ${bad.length - 1} more` : ''}`);
}
if (checked !== entryPoints.length) throw new Error(`checked ${checked} of ${entryPoints.length} commands and hooks`);
if (offences.length > 0)
  throw new Error(
    `commands must start without zod or src/contract (use src/client/endpoints.ts, or import() where a schema is needed):\n  ${offences.join('\n  ')}`,
  );

process.stdout.write(`bundled ${entryPoints.length} commands and hooks into dist/\n`);
