#!/usr/bin/env node
// A command runs without loading oclif: dist/commands.json (written by the build from oclif.manifest.json)
// names its file, and the command parses its own argv (src/cli/runtime/parse.ts). Importing and configuring
// oclif costs several times a bare `node -e 0`, so oclif is left to what needs it: help, topics, completion and
// unknown commands. `svc --version` prints exactly what oclif prints.
import { readFileSync } from 'node:fs';

// `-h` is `--help` everywhere (no command gives -h another meaning), for oclif too, up to `--`.
const end = process.argv.indexOf('--');
const argv = process.argv.slice(2).map((a, i) => (a === '-h' && (end === -1 || i + 2 < end) ? '--help' : a));
const table = JSON.parse(readFileSync(new URL('../dist/commands.json', import.meta.url), 'utf8'));

/** The longest run of leading words that names a command, e.g. `pam requests list`; -1 when none does. */
function commandWords() {
  let words = -1;
  for (let n = 1; n <= argv.length && !argv[n - 1].startsWith('-'); n++) {
    if (Object.hasOwn(table.commands, argv.slice(0, n).join(':'))) words = n;
  }
  return words;
}

/** oclif's rule: `--help` anywhere before `--` asks for help. */
const helpAsked = () => {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--help');
};

const versionAsked = argv.length === 1 && argv[0] === '--version';
const words = versionAsked ? -1 : commandWords();
if (versionAsked) {
  const arch = process.arch === 'ia32' ? 'x86' : process.arch;
  process.stdout.write(`${table.name}/${table.version} ${process.platform}-${arch} node-${process.version}\n`);
} else if (words > 0 && !helpAsked()) {
  const file = table.commands[argv.slice(0, words).join(':')];
  const { default: Command } = await import(new URL(`../dist/${file}`, import.meta.url).href);
  await Command.run(argv.slice(words), { bin: table.bin, version: table.version });
} else {
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url, args: argv });
}
