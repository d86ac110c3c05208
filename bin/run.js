#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size=8 (MB): V8's young generation at half its default. The server's resident memory under
// load stays some 15 MB lower for a few more scavenges, which cost no measurable throughput; a command's run is
// too short to notice. Starting it as `node bin/run.js` leaves V8's default (pass the flag to node yourself).
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
