'use strict';
// docs/api.md against the type declarations (index.d.ts, metrics.d.ts, and
// what zlib.d.ts declares beyond node:zlib), read with the TypeScript
// compiler API: a name or an option added, removed or renamed on either side
// fails here, naming it.
//
// The Markdown conventions this relies on (also stated in an HTML comment at
// the top of docs/api.md):
// - A heading that documents an API name holds exactly one code span, and
//   the code span is the name: `new Pool([options])`, `pool.member(...)`
//   (instance members of Pool), `Pool.member` (static members),
//   `hash.member` (Hash), `stream.member` (CodecStream), `zlib.member`
//   (@tidepool-rs/pool/zlib's own exports, zlib.d.ts), `fn(...)` (module
//   functions), `Name` (an exported type, interface or constant). Parameters
//   are the declared names, optional ones in [ ], rest parameters may be
//   left out; getters and properties have no parentheses. A heading without
//   a code span is prose and is not checked.
// - An event is documented by a heading "Event: `'name'`" whose section has
//   a line "Listener arguments: `(a, b)`" with the labels of its tuple in
//   PoolEvents.
// - An interface's property table is the first table after the heading that
//   names the interface, before the next heading: first column `name`, one
//   row per property (inherited ones included, except those of Node's and
//   TypeScript's own types), the property name in backticks. Options and
//   *Params tables have the columns name | type | default | meaning, and
//   "required" as the default of a property that is not optional. The type
//   column is the declared type as written in the .d.ts (pipes escaped as
//   \|); it is not compared when it uses a type parameter.
// - Exported types without a heading of their own are rows of the table
//   under "## Types" (name | definition | meaning).
// - The errors table is the first table under "## Errors" (code | class |
//   when), one code per row in backticks (`ERR__ERROR_*` for a template
//   literal code); a code that TidepoolErrorCode does not list is marked †
//   right after its code span.
// - Every (#anchor) link resolves to a heading, every relative link to a file.
// Fenced code blocks and HTML comments are skipped.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const ROOT = path.join(__dirname, '..');
const DOC_FILE = path.join(ROOT, 'docs', 'api.md');
const DECLARATION_FILES = [path.join(ROOT, 'index.d.ts'), path.join(ROOT, 'metrics.d.ts')];
/** @tidepool-rs/pool/zlib's declarations: node:zlib's (`export *`), and what it has beyond them. */
const ZLIB_DECLARATION_FILE = path.join(ROOT, 'zlib.d.ts');
/** The receiver of a heading that names an export of zlib.d.ts: `zlib.install([options])`. */
const ZLIB_RECEIVER = 'zlib';
/**
 * What zlib.d.ts declares itself that is node:zlib's API on Node 22.15 and
 * later (zstd's; this repository's @types/node may lack it): Node documents
 * it, and docs/zlib.md says where it runs. Every other export zlib.d.ts
 * declares itself is this module's own and has a heading in docs/api.md.
 */
const NODE_ZLIB_NAMES = Object.freeze([
  'ZstdOptions',
  'constants',
  'ZstdCompress',
  'ZstdDecompress',
  'createZstdCompress',
  'createZstdDecompress',
  'zstdCompress',
  'zstdDecompress',
  'zstdCompressSync',
  'zstdDecompressSync',
]);
const DOC = 'docs/api.md';

/** Who a heading's `receiver.member` names: the declaration and whether the member is static. */
const RECEIVERS = Object.freeze({
  pool: { owner: 'Pool', static: false },
  Pool: { owner: 'Pool', static: true },
  hash: { owner: 'Hash', static: false },
  stream: { owner: 'CodecStream', static: false },
});
/** The declarations whose every member must have a heading. */
const DOCUMENTED_MEMBERS = Object.freeze(['Pool', 'Hash', 'CodecStream']);
const OPTIONS_COLUMNS = Object.freeze(['name', 'type', 'default', 'meaning']);
const ERRORS_COLUMNS = Object.freeze(['code', 'class', 'when']);
const DAGGER = '†';

/** Fails with every problem found, one per line. */
function noProblems(problems, what) {
  if (problems.length !== 0) assert.fail(`${what}:\n  - ${problems.join('\n  - ')}`);
}

// ---------------------------------------------------------------- Markdown

/** The contents of the code spans of a line of Markdown. */
function codeSpans(text) {
  const spans = [];
  const re = /(`+)([\s\S]*?[^`])\1(?!`)/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    let content = m[2];
    if (m[1].length > 1 && content.startsWith(' ') && content.endsWith(' '))
      content = content.slice(1, -1);
    spans.push(content);
  }
  return spans;
}

/** A table row's cells (pipes escaped as \| are part of a cell). */
function cells(line) {
  const inner = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/** A heading's anchor, as GitHub makes it (before duplicates get -1, -2...). */
function slug(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Headings, tables and links of a Markdown text, outside fenced code and HTML comments. */
function parseMarkdown(text) {
  const lines = text.split('\n');
  const headings = [];
  const tables = [];
  const links = [];
  const seen = new Map();
  let fenced = false;
  let comment = false;
  let table;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const lineNo = i + 1;
    if (comment) {
      if (line.includes('-->')) comment = false;
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (line.startsWith('<!--')) {
      comment = !line.includes('-->');
      continue;
    }
    if (line.startsWith('|')) {
      if (table === undefined) {
        table = {
          line: lineNo,
          heading: headings[headings.length - 1],
          header: cells(line),
          rows: [],
        };
        tables.push(table);
      } else if (!/^\|[\s|:-]+\|?\s*$/.test(line)) {
        table.rows.push({ line: lineNo, cells: cells(line) });
      }
    } else {
      table = undefined;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[2].replace(/`/g, ''));
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      headings.push({
        level: heading[1].length,
        text: heading[2],
        line: lineNo,
        anchor: count === 0 ? base : `${base}-${count}`,
        base,
      });
      continue;
    }
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ target: m[1], line: lineNo });
  }
  return { headings, tables, links };
}

/** `message[, options]` as [{ name, optional, rest }]. */
function parseParams(source) {
  const out = [];
  let depth = 0;
  let current = '';
  let optional = false;
  const flush = () => {
    const name = current.trim();
    if (name !== '')
      out.push({ name: name.replace(/^\.\.\./, ''), optional, rest: name.startsWith('...') });
    current = '';
  };
  for (const ch of source) {
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    else if (ch === ',') flush();
    else {
      if (current.trim() === '' && ch.trim() !== '') optional = depth > 0;
      current += ch;
    }
  }
  flush();
  return out;
}

/** What a heading's code span names, or { kind: 'unknown' }. */
function parseApiName(span) {
  let m = /^'([^']+)'$/.exec(span);
  if (m) return { kind: 'event', name: m[1] };
  m = /^new\s+([A-Za-z_$][\w$]*)\((.*)\)$/.exec(span);
  if (m) return { kind: 'new', owner: m[1], params: parseParams(m[2]) };
  m = /^([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*)|(\[[^\]]+\]))(?:\((.*)\))?$/.exec(span);
  if (m)
    return {
      kind: 'member',
      receiver: m[1],
      member: m[2] ?? m[3],
      params: m[4] === undefined ? undefined : parseParams(m[4]),
    };
  m = /^([A-Za-z_$][\w$]*)\((.*)\)$/.exec(span);
  if (m) return { kind: 'function', name: m[1], params: parseParams(m[2]) };
  m = /^([A-Za-z_$][\w$]*)$/.exec(span);
  if (m) return { kind: 'name', name: m[1] };
  return { kind: 'unknown' };
}

const markdown = parseMarkdown(fs.readFileSync(DOC_FILE, 'utf8'));
const docLines = fs.readFileSync(DOC_FILE, 'utf8').split('\n');

/** Headings with an API code span: { heading, span, api }. */
const apiHeadings = markdown.headings
  .map((heading) => {
    const spans = codeSpans(heading.text);
    return spans.length === 1
      ? { heading, span: spans[0], api: parseApiName(spans[0]) }
      : undefined;
  })
  .filter((h) => h !== undefined);

/** The first table in a heading's own section (before the next heading). */
function tableUnder(heading) {
  return markdown.tables.find((table) => table.heading === heading);
}

/** The lines of a heading's own section. */
function sectionLines(heading) {
  const next = markdown.headings.find((h) => h.line > heading.line);
  return docLines.slice(heading.line, next === undefined ? docLines.length : next.line - 1);
}

function topHeading(text) {
  return markdown.headings.find((h) => h.level === 2 && h.text === text);
}

/** The name in a row's first cell: its one code span, or undefined. */
function rowName(row) {
  const spans = codeSpans(row.cells[0] ?? '');
  return spans.length === 1 ? spans[0] : undefined;
}

// ------------------------------------------------------------ Declarations

function loadDeclarations() {
  const program = ts.createProgram([...DECLARATION_FILES, ZLIB_DECLARATION_FILE], {
    strict: true,
    noEmit: true,
    esModuleInterop: true,
    types: ['node'],
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const ours = new Set([...DECLARATION_FILES, ZLIB_DECLARATION_FILE].map((f) => path.normalize(f)));
  const isOurs = (node) => ours.has(path.normalize(node.getSourceFile().fileName));
  const syntax = [];
  for (const file of [...DECLARATION_FILES, ZLIB_DECLARATION_FILE]) {
    const sourceFile = program.getSourceFile(file);
    for (const d of program.getSyntacticDiagnostics(sourceFile))
      syntax.push(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  assert.deepEqual(syntax, [], 'the declarations parse');

  const kindOf = (symbol) => {
    const f = symbol.flags;
    return f & ts.SymbolFlags.Class
      ? 'class'
      : f & ts.SymbolFlags.Interface
        ? 'interface'
        : f & ts.SymbolFlags.TypeAlias
          ? 'type'
          : f & ts.SymbolFlags.Function
            ? 'function'
            : f & ts.SymbolFlags.Variable
              ? 'const'
              : 'other';
  };

  /** name -> { symbol, file, kind } for both files' exports. */
  const exported = new Map();
  for (const file of DECLARATION_FILES) {
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file));
    for (const symbol of checker.getExportsOfModule(moduleSymbol))
      exported.set(symbol.name, { symbol, file: path.basename(file), kind: kindOf(symbol) });
  }

  /**
   * name -> { symbol, file, kind } for what zlib.d.ts declares itself (not
   * what it re-exports from node:zlib), NODE_ZLIB_NAMES included.
   */
  const zlibExported = new Map();
  const zlibFile = program.getSourceFile(ZLIB_DECLARATION_FILE);
  for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(zlibFile))) {
    if (!(symbol.declarations ?? []).some((d) => d.getSourceFile() === zlibFile)) continue;
    zlibExported.set(symbol.name, {
      symbol,
      file: path.basename(ZLIB_DECLARATION_FILE),
      kind: kindOf(symbol),
    });
  }

  const paramsOf = (node) =>
    node.parameters.map((p) => ({
      name: p.name.getText(),
      optional: p.questionToken !== undefined || p.initializer !== undefined,
      rest: p.dotDotDotToken !== undefined,
    }));

  /** The own members of a class or interface, by `static:name`: { name, static, kind, overloads }. */
  function membersOf(name) {
    const members = new Map();
    for (const declaration of exported.get(name).symbol.declarations) {
      if (!ts.isClassDeclaration(declaration) && !ts.isInterfaceDeclaration(declaration)) continue;
      for (const member of declaration.members) {
        const isStatic = (ts.getCombinedModifierFlags(member) & ts.ModifierFlags.Static) !== 0;
        let memberName;
        let kind;
        if (ts.isConstructorDeclaration(member)) {
          memberName = 'constructor';
          kind = 'constructor';
        } else if (ts.isMethodDeclaration(member) || ts.isMethodSignature(member)) {
          memberName = member.name.getText();
          kind = 'method';
        } else if (
          ts.isGetAccessorDeclaration(member) ||
          ts.isPropertyDeclaration(member) ||
          ts.isPropertySignature(member)
        ) {
          memberName = member.name.getText();
          kind = 'property';
        } else {
          continue;
        }
        const key = `${isStatic ? 'static ' : ''}${memberName}`;
        if (!members.has(key))
          members.set(key, { name: memberName, static: isStatic, kind, overloads: [] });
        if (kind !== 'property') members.get(key).overloads.push(paramsOf(member));
      }
    }
    return members;
  }

  /** The properties of an interface, inherited ones included (not those of Node's or TypeScript's own types). */
  function propertiesOf(name) {
    const type = checker.getDeclaredTypeOfSymbol(
      (exported.get(name) ?? zlibExported.get(name)).symbol,
    );
    const out = [];
    for (const property of checker.getPropertiesOfType(type)) {
      const declaration = property.declarations?.[0];
      if (declaration === undefined || !isOurs(declaration)) continue;
      const owner = declaration.parent;
      const typeParameters = (owner && owner.typeParameters ? owner.typeParameters : []).map(
        (p) => p.name.text,
      );
      const typeText =
        declaration.type === undefined
          ? undefined
          : declaration.type.getText().replace(/\s+/g, ' ');
      const defaults = ts
        .getJSDocTags(declaration)
        .filter((tag) => tag.tagName.text === 'default')
        .map((tag) => (ts.getTextOfJSDocComment(tag.comment) ?? '').trim());
      out.push({
        name: property.name,
        optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
        typeText,
        usesTypeParameter:
          typeText !== undefined &&
          typeParameters.some((p) => new RegExp(`\\b${p}\\b`).test(typeText)),
        defaultTag: defaults[0],
      });
    }
    return out;
  }

  /** The event names the listener methods of Pool type (their `event` parameter's literal constraint). */
  function eventNames() {
    const names = new Set();
    for (const declaration of exported.get('Pool').symbol.declarations) {
      if (!ts.isClassDeclaration(declaration)) continue;
      for (const member of declaration.members) {
        if (
          !ts.isMethodDeclaration(member) ||
          member.parameters.length === 0 ||
          member.parameters[0].name.getText() !== 'event'
        )
          continue;
        const type = checker.getTypeAtLocation(member.parameters[0]);
        const constraint = checker.getBaseConstraintOfType(type) ?? type;
        for (const t of constraint.isUnion() ? constraint.types : [constraint])
          if (t.isStringLiteral()) names.add(t.value);
      }
    }
    return names;
  }

  /** PoolEvents' tuples: event name -> its labels. */
  function eventArguments() {
    const out = new Map();
    for (const declaration of exported.get('PoolEvents').symbol.declarations) {
      for (const member of declaration.members) {
        if (
          !ts.isPropertySignature(member) ||
          member.type === undefined ||
          !ts.isTupleTypeNode(member.type)
        )
          continue;
        out.set(
          member.name.getText(),
          member.type.elements.map((e) => (ts.isNamedTupleMember(e) ? e.name.text : e.getText())),
        );
      }
    }
    return out;
  }

  /** TidepoolErrorCode's members: literal codes, and template literals as `PREFIX*`. */
  function errorCodes() {
    const type = checker.getDeclaredTypeOfSymbol(exported.get('TidepoolErrorCode').symbol);
    const codes = new Set();
    for (const t of type.isUnion() ? type.types : [type]) {
      if (t.isStringLiteral()) codes.add(t.value);
      else if (t.flags & ts.TypeFlags.TemplateLiteral) codes.add(t.texts.join('*'));
      else
        assert.fail(
          `TidepoolErrorCode has a member that is not a string: ${checker.typeToString(t)}`,
        );
    }
    return codes;
  }

  function functionParams(name, from = exported) {
    return from
      .get(name)
      .symbol.declarations.filter((d) => ts.isFunctionDeclaration(d))
      .map(paramsOf);
  }

  return {
    exported,
    zlibExported,
    membersOf,
    propertiesOf,
    eventNames,
    eventArguments,
    errorCodes,
    functionParams,
  };
}

const declarations = loadDeclarations();
const { exported, zlibExported } = declarations;
/** @tidepool-rs/pool/zlib's own exports: what zlib.d.ts declares beyond node:zlib's API. */
const zlibOwn = new Map([...zlibExported].filter(([name]) => !NODE_ZLIB_NAMES.includes(name)));
/** An exported type or interface of index.d.ts, metrics.d.ts, or zlib.d.ts's own. */
const declaredType = (name) => exported.get(name) ?? zlibOwn.get(name);

/** Why `heading`'s parameters do not fit the declared overloads, or undefined. */
function signatureProblem(documented, overloads) {
  const want = documented.filter((p) => !p.rest);
  const lists = overloads.map((o) => o.filter((p) => !p.rest));
  const show = (list) => `(${list.map((p) => (p.optional ? `[${p.name}]` : p.name)).join(', ')})`;
  const match = lists.find(
    (list) => list.length === want.length && list.every((p, i) => p.name === want[i].name),
  );
  if (match === undefined)
    return `its parameters ${show(want)} match no declared signature: ${lists.map(show).join(' or ')}`;
  for (let i = 0; i < want.length; i++) {
    const optional = match[i].optional || lists.some((list) => list.length <= i);
    if (optional !== want[i].optional)
      return `'${want[i].name}' is ${optional ? 'optional' : 'required'} in the declarations`;
  }
  return undefined;
}

/** The interfaces whose tables must list every property: names ending in Options, and the *Params interfaces. */
function isOptionsInterface(name) {
  return (
    declaredType(name)?.kind === 'interface' &&
    (name.endsWith('Options') || name.endsWith('Params'))
  );
}

// ------------------------------------------------------------------ Tests

test(`${DOC} keeps the Markdown conventions the other checks rely on`, () => {
  const problems = [];
  for (const heading of markdown.headings) {
    const spans = codeSpans(heading.text);
    if (spans.length > 1)
      problems.push(
        `${DOC}:${heading.line}: heading "${heading.text}" has ${spans.length} code spans (one names the API)`,
      );
  }
  for (const { heading, span, api } of apiHeadings) {
    if (api.kind === 'unknown')
      problems.push(
        `${DOC}:${heading.line}: heading code span \`${span}\` is no API name this test can read`,
      );
    if (api.kind === 'event' && !/^Event: `'[^']+'`$/.test(heading.text)) {
      problems.push(
        `${DOC}:${heading.line}: an event heading reads "Event: \`'name'\`", not "${heading.text}"`,
      );
    }
  }
  const anchors = new Map();
  for (const heading of markdown.headings) {
    if (anchors.has(heading.base)) {
      problems.push(
        `${DOC}:${heading.line}: heading "${heading.text}" has the anchor of line ${anchors.get(heading.base)} (#${heading.base})`,
      );
    } else {
      anchors.set(heading.base, heading.line);
    }
  }
  const targets = new Set(markdown.headings.map((h) => h.anchor));
  for (const link of markdown.links) {
    if (/^[a-z]+:/i.test(link.target)) continue;
    if (link.target.startsWith('#')) {
      if (!targets.has(link.target.slice(1)))
        problems.push(`${DOC}:${link.line}: link to ${link.target}, which no heading has`);
    } else {
      const file = path.join(path.dirname(DOC_FILE), link.target.split('#')[0]);
      if (!fs.existsSync(file))
        problems.push(`${DOC}:${link.line}: link to ${link.target}, which is no file`);
    }
  }
  for (const table of markdown.tables) {
    for (const row of table.rows) {
      if (row.cells.length !== table.header.length) {
        problems.push(
          `${DOC}:${row.line}: ${row.cells.length} cells in a table of ${table.header.length} columns (a | not escaped as \\|?)`,
        );
      }
    }
  }
  noProblems(problems, `${DOC} breaks its conventions`);
});

test(`every export of index.d.ts and metrics.d.ts is documented in ${DOC}`, () => {
  const headed = new Set();
  for (const { api } of apiHeadings) {
    if (api.kind === 'name' || api.kind === 'function') headed.add(api.name);
    if (api.kind === 'new') headed.add(api.owner);
  }
  const types = topHeading('Types');
  assert.ok(types !== undefined, `${DOC} has a "## Types" section`);
  const typesTable = tableUnder(types);
  assert.ok(typesTable !== undefined, `${DOC}: "## Types" has a table`);
  const typeRows = new Map(typesTable.rows.map((row) => [rowName(row), row]));
  const problems = [];
  for (const [name, { file, kind }] of exported) {
    const valued = kind === 'class' || kind === 'function' || kind === 'const';
    if (headed.has(name)) continue;
    if (valued) problems.push(`${name} (${kind}, ${file}) has no heading in ${DOC}`);
    else if (!typeRows.has(name))
      problems.push(
        `${name} (${kind}, ${file}) has neither a heading nor a row in the Types table of ${DOC}`,
      );
  }
  for (const [name, row] of typeRows) {
    const declared = exported.get(name);
    if (name === undefined)
      problems.push(`${DOC}:${row.line}: a row of the Types table names no type in backticks`);
    else if (declared === undefined)
      problems.push(
        `${DOC}:${row.line}: the Types table lists ${name}, which the declarations do not export`,
      );
    else if (declared.kind !== 'type' && declared.kind !== 'interface')
      problems.push(`${DOC}:${row.line}: ${name} is a ${declared.kind}, not a type`);
    else if (headed.has(name))
      problems.push(
        `${DOC}:${row.line}: ${name} has a heading of its own and a row in the Types table`,
      );
  }
  noProblems(problems, 'exports missing from the API reference');
});

test(`every export zlib.d.ts declares beyond node:zlib's API is documented in ${DOC}`, () => {
  const problems = [];
  for (const name of NODE_ZLIB_NAMES) {
    if (!zlibExported.has(name))
      problems.push(`NODE_ZLIB_NAMES lists ${name}, which zlib.d.ts does not declare`);
  }
  const members = new Set();
  const names = new Set();
  for (const { api } of apiHeadings) {
    if (api.kind === 'member' && api.receiver === ZLIB_RECEIVER) members.add(api.member);
    if (api.kind === 'name') names.add(api.name);
  }
  assert.ok(zlibOwn.size > 0, 'zlib.d.ts declares exports of its own');
  for (const [name, { file, kind }] of zlibOwn) {
    if (kind === 'function' || kind === 'const') {
      if (!members.has(name))
        problems.push(
          `${name} (${kind}, ${file}) has no heading \`${ZLIB_RECEIVER}.${name}\` in ${DOC}`,
        );
    } else if (!names.has(name)) {
      problems.push(`${name} (${kind}, ${file}) has no heading \`${name}\` in ${DOC}`);
    }
  }
  noProblems(problems, '@tidepool-rs/pool/zlib exports missing from the API reference');
});

test(`every API name in a heading of ${DOC} exists in the declarations, with the declared parameters`, () => {
  const members = new Map(
    Object.values(RECEIVERS).map(({ owner }) => [owner, declarations.membersOf(owner)]),
  );
  const events = declarations.eventNames();
  const problems = [];
  for (const { heading, span, api } of apiHeadings) {
    const at = `${DOC}:${heading.line}: \`${span}\``;
    if (api.kind === 'name') {
      if (!exported.has(api.name) && zlibOwn.get(api.name)?.kind !== 'interface')
        problems.push(
          `${at} names nothing index.d.ts or metrics.d.ts exports, nor an interface of zlib.d.ts's own`,
        );
    } else if (api.kind === 'function') {
      const declared = exported.get(api.name);
      if (declared === undefined || declared.kind !== 'function')
        problems.push(`${at}: no exported function ${api.name}`);
      else {
        const problem = signatureProblem(api.params, declarations.functionParams(api.name));
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      }
    } else if (api.kind === 'new') {
      const constructor =
        exported.get(api.owner)?.kind === 'class'
          ? declarations.membersOf(api.owner).get('constructor')
          : undefined;
      if (constructor === undefined)
        problems.push(`${at}: no exported class ${api.owner} with a constructor`);
      else {
        const problem = signatureProblem(api.params, constructor.overloads);
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      }
    } else if (api.kind === 'member' && api.receiver === ZLIB_RECEIVER) {
      const declared = zlibExported.get(api.member);
      if (declared === undefined || (declared.kind !== 'function' && declared.kind !== 'const')) {
        problems.push(`${at}: zlib.d.ts declares no function or constant ${api.member}`);
      } else if (declared.kind === 'const' && api.params !== undefined) {
        problems.push(`${at}: ${api.member} is a constant of zlib.d.ts (no parentheses)`);
      } else if (declared.kind === 'function' && api.params === undefined) {
        problems.push(`${at}: ${api.member} is a function of zlib.d.ts (write its parameters)`);
      } else if (api.params !== undefined) {
        const problem = signatureProblem(
          api.params,
          declarations.functionParams(api.member, zlibExported),
        );
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      }
    } else if (api.kind === 'member') {
      const receiver = RECEIVERS[api.receiver];
      if (receiver === undefined) {
        problems.push(
          `${at}: '${api.receiver}' is not one of the receivers ${[...Object.keys(RECEIVERS), ZLIB_RECEIVER].join(', ')}`,
        );
        continue;
      }
      const member = members
        .get(receiver.owner)
        .get(`${receiver.static ? 'static ' : ''}${api.member}`);
      if (member === undefined) {
        problems.push(
          `${at}: ${receiver.owner} declares no ${receiver.static ? 'static' : 'instance'} member ${api.member}`,
        );
      } else if (member.kind === 'property' && api.params !== undefined) {
        problems.push(
          `${at}: ${receiver.owner}.${api.member} is a property or getter (no parentheses)`,
        );
      } else if (member.kind !== 'property' && api.params === undefined) {
        problems.push(`${at}: ${receiver.owner}.${api.member} is a method (write its parameters)`);
      } else if (api.params !== undefined) {
        const problem = signatureProblem(api.params, member.overloads);
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      }
    } else if (api.kind === 'event') {
      if (!events.has(api.name))
        problems.push(`${at}: Pool's listener methods type no event '${api.name}'`);
    }
  }
  noProblems(problems, `headings of ${DOC} that the declarations contradict`);
});

test(`every member of Pool, Hash and CodecStream has a heading in ${DOC}`, () => {
  const documented = new Set();
  for (const { api } of apiHeadings) {
    if (api.kind === 'new') documented.add(`${api.owner} constructor`);
    if (api.kind === 'member' && RECEIVERS[api.receiver] !== undefined) {
      const { owner, static: isStatic } = RECEIVERS[api.receiver];
      documented.add(`${owner} ${isStatic ? 'static ' : ''}${api.member}`);
    }
  }
  const receiverOf = (owner, isStatic) =>
    Object.keys(RECEIVERS).find(
      (r) => RECEIVERS[r].owner === owner && RECEIVERS[r].static === isStatic,
    );
  const problems = [];
  for (const owner of DOCUMENTED_MEMBERS) {
    for (const [key, member] of declarations.membersOf(owner)) {
      if (documented.has(`${owner} ${key}`)) continue;
      const shown =
        member.kind === 'constructor'
          ? `new ${owner}(...)`
          : `${receiverOf(owner, member.static)}${member.name.startsWith('[') ? '' : '.'}${member.name}${member.kind === 'method' ? '(...)' : ''}`;
      problems.push(
        `${owner} declares ${member.kind} ${member.name}${member.static ? ' (static)' : ''}: no heading \`${shown}\` in ${DOC}`,
      );
    }
  }
  noProblems(problems, 'members without a heading');
});

test(`every options and parameters interface has a table in ${DOC} with one row per property, and no other row`, () => {
  const headingOf = new Map();
  for (const { heading, api } of apiHeadings) {
    if (api.kind === 'name' && declaredType(api.name)?.kind === 'interface')
      headingOf.set(api.name, heading);
  }
  const problems = [];
  for (const name of [...exported.keys(), ...zlibOwn.keys()]) {
    if (isOptionsInterface(name) && !headingOf.has(name))
      problems.push(`${name}: no heading \`${name}\` followed by its options table in ${DOC}`);
  }
  for (const [name, heading] of headingOf) {
    const table = tableUnder(heading);
    const options = isOptionsInterface(name);
    if (table === undefined) {
      if (options) problems.push(`${DOC}:${heading.line}: no table under the heading of ${name}`);
      continue;
    }
    if (table.header[0] !== 'name') {
      if (options)
        problems.push(
          `${DOC}:${table.line}: the table of ${name} starts with "${table.header[0]}", not "name"`,
        );
      continue;
    }
    if (options && table.header.join(' | ') !== OPTIONS_COLUMNS.join(' | ')) {
      problems.push(
        `${DOC}:${table.line}: the columns of ${name}'s table are "${table.header.join(' | ')}", not "${OPTIONS_COLUMNS.join(' | ')}"`,
      );
    }
    const typeColumn = table.header.indexOf('type');
    const defaultColumn = table.header.indexOf('default');
    const properties = new Map(declarations.propertiesOf(name).map((p) => [p.name, p]));
    const rows = new Map();
    for (const row of table.rows) {
      const property = rowName(row);
      if (property === undefined) {
        problems.push(
          `${DOC}:${row.line}: a row of ${name}'s table names no property in backticks`,
        );
        continue;
      }
      if (rows.has(property))
        problems.push(`${DOC}:${row.line}: ${name}.${property} has a second row`);
      rows.set(property, row);
      const declared = properties.get(property);
      if (declared === undefined) {
        problems.push(
          `${DOC}:${row.line}: ${name}'s table has a row for '${property}', which ${name} does not declare`,
        );
        continue;
      }
      if (typeColumn >= 0 && declared.typeText !== undefined && !declared.usesTypeParameter) {
        const spans = codeSpans(row.cells[typeColumn]);
        const documented =
          spans.length === 1
            ? spans[0].replace(/\\\|/g, '|').replace(/\s+/g, ' ')
            : row.cells[typeColumn];
        if (documented !== declared.typeText) {
          problems.push(
            `${DOC}:${row.line}: ${name}.${property} is documented as \`${documented}\`, declared as \`${declared.typeText}\``,
          );
        }
      }
      if (defaultColumn >= 0) {
        const cell = row.cells[defaultColumn];
        if (!declared.optional && cell !== 'required') {
          problems.push(
            `${DOC}:${row.line}: ${name}.${property} is required: its default cell says "required", not "${cell}"`,
          );
        } else if (declared.optional && cell === '') {
          problems.push(
            `${DOC}:${row.line}: ${name}.${property} has an empty default cell (— for none)`,
          );
        }
        const literal = declared.defaultTag;
        if (
          literal !== undefined &&
          /^(-?\d+(\.\d+)?|'[^']*'|Infinity|true|false)$/.test(literal) &&
          !codeSpans(cell).includes(literal)
        ) {
          problems.push(
            `${DOC}:${row.line}: ${name}.${property} defaults to \`${literal}\` (@default in the declarations); the table says "${cell}"`,
          );
        }
      }
    }
    for (const property of properties.keys()) {
      if (!rows.has(property))
        problems.push(
          `${DOC}:${table.line}: ${name}'s table has no row for '${property}' (declared in the .d.ts)`,
        );
    }
  }
  noProblems(problems, 'interface tables that disagree with the declarations');
});

test(`the errors table of ${DOC} lists exactly the codes of TidepoolErrorCode (others marked ${DAGGER})`, () => {
  const errors = topHeading('Errors');
  assert.ok(errors !== undefined, `${DOC} has a "## Errors" section`);
  const table = tableUnder(errors);
  assert.ok(table !== undefined, `${DOC}: "## Errors" has a table`);
  assert.deepEqual(
    table.header,
    [...ERRORS_COLUMNS],
    `${DOC}:${table.line}: the errors table's columns`,
  );
  const declared = declarations.errorCodes();
  const documented = new Map();
  const problems = [];
  for (const row of table.rows) {
    const code = rowName(row);
    if (code === undefined) {
      problems.push(
        `${DOC}:${row.line}: the first cell holds one code in backticks, not "${row.cells[0]}"`,
      );
      continue;
    }
    if (documented.has(code)) problems.push(`${DOC}:${row.line}: ${code} has a second row`);
    const marked = row.cells[0].replace(/`[^`]*`/, '').trim() === DAGGER;
    documented.set(code, row);
    if (!/\b(TypeError|RangeError|Error|AbortError)\b/.test(row.cells[1])) {
      problems.push(
        `${DOC}:${row.line}: ${code}'s class is "${row.cells[1]}", not TypeError, RangeError, Error or AbortError`,
      );
    }
    if (row.cells[2] === '')
      problems.push(`${DOC}:${row.line}: ${code} does not say when it comes`);
    if (declared.has(code) && marked)
      problems.push(`${DOC}:${row.line}: ${code} is in TidepoolErrorCode now: drop its ${DAGGER}`);
    if (!declared.has(code) && !marked) {
      problems.push(
        `${DOC}:${row.line}: ${code} is not in TidepoolErrorCode (index.d.ts): mark it ${DAGGER}, or remove the row if the code is gone`,
      );
    }
  }
  for (const code of declared) {
    if (!documented.has(code))
      problems.push(
        `TidepoolErrorCode (index.d.ts) has ${code}, which the errors table of ${DOC} does not list`,
      );
  }
  noProblems(problems, 'error codes that disagree with the declarations');
});

test(`every event the declarations type has a section in ${DOC} with its listener arguments`, () => {
  const typed = declarations.eventNames();
  const labels = declarations.eventArguments();
  assert.ok(typed.size > 0, "Pool's listener methods type some events");
  const documented = new Map(
    apiHeadings.filter((h) => h.api.kind === 'event').map((h) => [h.api.name, h.heading]),
  );
  const problems = [];
  for (const event of typed) {
    const heading = documented.get(event);
    if (heading === undefined) {
      problems.push(`event '${event}' has no heading "Event: \`'${event}'\`" in ${DOC}`);
      continue;
    }
    const expected = labels.get(event);
    if (expected === undefined) {
      problems.push(
        `event '${event}' is typed by the listener methods but not declared in PoolEvents`,
      );
      continue;
    }
    const line = sectionLines(heading).find((l) => l.startsWith('Listener arguments:'));
    const shown = `(${expected.join(', ')})`;
    if (line === undefined)
      problems.push(
        `${DOC}:${heading.line}: event '${event}' has no line "Listener arguments: \`${shown}\`"`,
      );
    else if (!codeSpans(line).includes(shown))
      problems.push(
        `${DOC}:${heading.line}: event '${event}' takes \`${shown}\` (PoolEvents), the section says "${line}"`,
      );
  }
  for (const [event, heading] of documented) {
    if (!typed.has(event))
      problems.push(`${DOC}:${heading.line}: event '${event}' is not typed by the declarations`);
  }
  noProblems(problems, 'events that disagree with the declarations');
});
