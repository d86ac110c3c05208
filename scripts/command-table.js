#!/usr/bin/env node
// Writes dist/commands.json (part of `npm run build`): every command id and alias of oclif.manifest.json with
// the file that holds it, which is all bin/run.js needs to run a command without loading oclif. Ids are
// oclif's (`orgs:list`); help, completion and unknown commands still go through oclif and the full manifest.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8'));
const pjson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

const commands = {};
for (const [id, command] of Object.entries(manifest.commands)) {
  const [dist, ...rest] = command.relativePath;
  if (dist !== 'dist') throw new Error(`${id}: expected a file under dist/, got ${command.relativePath.join('/')}`);
  for (const name of [id, ...(command.aliases ?? [])]) commands[name] = rest.join('/');
}
const table = { name: pjson.name, bin: pjson.oclif.bin, version: pjson.version, commands };
fs.writeFileSync(path.join(ROOT, 'dist', 'commands.json'), `${JSON.stringify(table)}\n`);
