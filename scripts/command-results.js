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
    results[command.id] = shapeOf(checker, result);
  }
  return results;
}

const FORMAT = ts.TypeFormatFlags.NoTruncation;

/**
 * A type written out as the compiler does, except that objects are always spelled out field by field: the compiler
 * writes a named interface (`ServerStatus`) by its name, which would leave its fields out of the snapshot.
 * Records and other index signatures, primitives and literals are written as the compiler writes them; in a union,
 * `null` and `undefined` come last, and an optional field's `?` stands for its `undefined`.
 */
function shapeOf(checker, type, seen = new Set(), optional = false) {
  if (type.flags & ts.TypeFlags.Boolean) return 'boolean';
  if (type.isUnion()) {
    const members = type.types.filter((member) => !(optional && member.flags & ts.TypeFlags.Undefined));
    const booleans = members.filter((member) => member.flags & ts.TypeFlags.BooleanLiteral);
    const nullish = members.filter((member) => member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined));
    const rest = members.filter((member) => !booleans.includes(member) && !nullish.includes(member));
    return [
      ...rest.map((member) => shapeOf(checker, member, seen)),
      // `boolean` inside a union is its two literals: written once, as the compiler does.
      ...(booleans.length === 2 ? ['boolean'] : booleans.map((member) => checker.typeToString(member))),
      ...nullish.map((member) => checker.typeToString(member)),
    ].join(' | ');
  }
  if (checker.isArrayType(type)) {
    const element = checker.getTypeArguments(type)[0];
    const text = shapeOf(checker, element, seen);
    return element.isUnion() && !(element.flags & ts.TypeFlags.Boolean) ? `(${text})[]` : `${text}[]`;
  }
  const properties = type.flags & ts.TypeFlags.Object ? checker.getPropertiesOfType(type) : [];
  const opaque = properties.length === 0 || checker.getIndexInfosOfType(type).length > 0 || type.getCallSignatures().length > 0;
  if (opaque || seen.has(type)) return checker.typeToString(type, undefined, FORMAT);
  seen.add(type);
  const fields = properties.map((property) => {
    const isOptional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const propertyType = declaration ? checker.getTypeOfSymbolAtLocation(property, declaration) : checker.getTypeOfSymbol(property);
    return `${property.name}${isOptional ? '?' : ''}: ${shapeOf(checker, propertyType, seen, isOptional)};`;
  });
  seen.delete(type);
  return `{ ${fields.join(' ')} }`;
}
