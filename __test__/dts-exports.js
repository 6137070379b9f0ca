'use strict';
// The names a package entry's .d.ts declares as values (functions,
// classes, constants; not types), read with TypeScript's checker: what
// code that type-checks may import, and so what the module must export at
// run time (__test__/entry-exports.test.js, scripts/pack-smoke.sh).
// Not a test file itself.

const path = require('node:path');
const ts = require('typescript');

/** The value names `file` (a .d.ts, absolute) exports, sorted. */
function declaredValues(file) {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [path.join(__dirname, '..', 'node_modules', '@types')],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${file}: not read by TypeScript`);
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${file}: not a module`);
  const names = [];
  for (const symbol of checker.getExportsOfModule(module)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (target.flags & ts.SymbolFlags.Value) names.push(symbol.getName());
  }
  return names.sort();
}

module.exports = { declaredValues };
