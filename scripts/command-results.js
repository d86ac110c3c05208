// The JSON shape of each command's result (STYLE.md: the command surface is frozen by a snapshot of every command,
// its flags and the shape of what `-o json` prints). The manifest freezes commands and flags; this gives, per
// command, the TypeScript type its `run()` resolves to, as the compiler writes it out in full, read from src/ with
// the TypeScript compiler API. A change of what a command prints, whether it comes from the contract or from the
// command itself, changes this text and so shows in review (test/e2e/generated.test.ts fails until it is
// regenerated). `svc api` answers whatever the API does: `unknown`.
import path from 'node:path';
import ts from 'typescript';

/** `{ "<command id>": "<type of its result>" }` for the commands of the manifest, in its order. */
export function commandResults(root, manifest) {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  const sourceOf = (command) =>
    path.join(root, 'src', ...command.relativePath.slice(1, -1), command.relativePath.at(-1).replace(/\.js$/, '.ts'));
  const commands = Object.values(manifest.commands);
  const program = ts.createProgram(commands.map(sourceOf), config.options);
  const checker = program.getTypeChecker();
  const results = {};
  for (const command of commands) {
    const file = program.getSourceFile(sourceOf(command));
    if (!file) throw new Error(`no source for ${command.id}: ${sourceOf(command)}`);
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(file)).find((s) => s.escapedName === 'default');
    const instance = exported && checker.getTypeOfSymbolAtLocation(exported, file).getConstructSignatures()[0]?.getReturnType();
    const run = instance?.getProperty('run');
    const signature = run && checker.getTypeOfSymbolAtLocation(run, file).getCallSignatures()[0];
    if (!signature) throw new Error(`${command.id}: its default export has no run()`);
    const result = checker.getAwaitedType(signature.getReturnType()) ?? signature.getReturnType();
    results[command.id] = checker.typeToString(result, undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias);
  }
  return results;
}
