#!/usr/bin/env node
// `svc --version` answers without loading oclif (importing @oclif/core alone costs several times a bare
// `node -e 0`), printing exactly what oclif prints: `<name>/<version> <platform>-<arch> node-<version>`.
if (process.argv[2] === '--version' && process.argv.length === 3) {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const arch = process.arch === 'ia32' ? 'x86' : process.arch;
  process.stdout.write(`${pkg.name}/${pkg.version} ${process.platform}-${arch} node-${process.version}\n`);
} else {
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}
