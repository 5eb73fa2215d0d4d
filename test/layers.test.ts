// The code layout keeps its dependencies pointing one way. This test reads src/ with the TypeScript parser and fails,
// naming the file and the import, on: an import from a higher layer (or from a sibling of the same layer), SQL
// (tagged-template queries or `.unsafe(`) outside src/store, I/O in the pure layers, and any import cycle.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/**
 * Layers, lowest first. A unit is a folder of src/ or a file at its top. A file may import from its own unit and from
 * any unit of a lower layer; units of the same layer do not import each other (the top and bottom layers excepted:
 * each is one unit).
 */
const LAYERS: { name: string; units: string[]; oneUnit?: boolean }[] = [
  {
    name: 'foundation',
    oneUnit: true,
    units: ['config.ts', 'errors.ts', 'logger.ts', 'log-format.ts', 'input-checks.ts', 'redis-outage.ts', 'startup-error.ts', 'cli.ts', 'observer-client.ts', 'types'],
  },
  { name: 'chain', units: ['chain'] },
  { name: 'store', units: ['store'] },
  { name: 'views and plumbing', units: ['views', 'http', 'metrics.ts'] },
  { name: 'projection', units: ['projector'] },
  { name: 'services on the store', units: ['answers', 'observer', 'auth'] },
  { name: 'features', units: ['proxy', 'hooks'] },
  { name: 'interfaces', units: ['api', 'push'] },
  {
    name: 'application',
    oneUnit: true,
    units: ['service.ts', 'main.ts', 'demo.ts', 'demo-command.ts', 'replay.ts', 'replay-http.ts', 'metrics-server.ts'],
  },
];

/** Pure layers: no I/O modules, and the store only for its row types (`import type`). */
const PURE_UNITS = new Set(['chain', 'views']);
const IO_MODULES = /^(node:)?(fs|fs\/promises|net|http|https|dgram|child_process|worker_threads)$|^(postgres|ioredis|socket\.io.*|uWebSockets\.js|@electric-sql\/.*|pino)$/;

/**
 * Files outside src/store that still hold SQL, each with the reason; anything else with a query fails.
 * Keep this list short: a query belongs in a store module.
 */
const SQL_ALLOWED: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

const rel = (abs: string) => path.relative(SRC, abs).split(path.sep).join('/');
const unitOf = (file: string) => rel(file).split('/')[0];

function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.units.includes(unit));
  if (i < 0) throw new Error(`src/${unit} is in no layer: add it to LAYERS in test/layers.test.ts`);
  return i;
}

interface Import {
  from: string; // file, relative to src
  spec: string;
  target?: string; // resolved file, relative to src (relative specifiers only)
  typeOnly: boolean;
  line: number;
}

interface Query {
  file: string;
  line: number;
  text: string;
}

function parse(file: string, text = readFileSync(file, 'utf8')): { imports: Import[]; queries: Query[] } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imports: Import[] = [];
  const queries: Query[] = [];
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const add = (spec: string, typeOnly: boolean, node: ts.Node) => {
    let target: string | undefined;
    if (spec.startsWith('.')) target = rel(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
    if (target?.startsWith('../')) target = undefined; // package.json and the like, outside src/
    imports.push({ from: rel(file), spec, target, typeOnly, line: lineOf(node) });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const typeOnly =
        !!c &&
        (c.isTypeOnly ||
          (!c.name && !!c.namedBindings && ts.isNamedImports(c.namedBindings) && c.namedBindings.elements.length > 0 && c.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly, node);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly, node);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) add(arg.text, false, node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true, node);
    } else if (ts.isTaggedTemplateExpression(node)) {
      const tag = node.tag.getText(sf);
      if (/(^|\.)(sql|tx|db|sqlRead|reader)$/i.test(tag)) queries.push({ file: rel(file), line: lineOf(node), text: `${tag}\`…\`` });
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'unsafe') {
      queries.push({ file: rel(file), line: lineOf(node), text: `${node.expression.getText(sf)}(…)` });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { imports, queries };
}

const files = sourceFiles(SRC);
const parsed = new Map(files.map((f) => [rel(f), parse(f)]));
const show = (i: Import) => `src/${i.from}:${i.line} imports '${i.spec}'`;

describe('code layout', () => {
  it('assigns every file of src/ to a layer', () => {
    const unplaced = [...new Set(files.map(unitOf))].filter((u) => !LAYERS.some((l) => l.units.includes(u)));
    expect(unplaced, 'add these to LAYERS in test/layers.test.ts').toEqual([]);
  });

  it('imports only from its own unit or a lower layer', () => {
    const wrong: string[] = [];
    for (const { imports } of parsed.values()) {
      for (const i of imports) {
        if (!i.target) continue;
        const fromUnit = i.from.split('/')[0];
        const toUnit = i.target.split('/')[0];
        if (fromUnit === toUnit) continue;
        const a = layerOf(fromUnit);
        const b = layerOf(toUnit);
        if (b < a) continue;
        if (b === a && LAYERS[a].oneUnit) continue;
        wrong.push(
          `${show(i)}: ${LAYERS[a].name} (${fromUnit}) ${b === a ? 'must not import its sibling' : 'must not import the higher layer'} ${LAYERS[b].name} (${toUnit})`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps chain/ and views/ pure: no I/O modules, the store for row types only', () => {
    const wrong: string[] = [];
    for (const { imports } of parsed.values()) {
      for (const i of imports) {
        if (!PURE_UNITS.has(i.from.split('/')[0])) continue;
        if (IO_MODULES.test(i.spec)) wrong.push(`${show(i)}: an I/O module in a pure layer`);
        if (i.target?.startsWith('store/') && !i.typeOnly) wrong.push(`${show(i)}: pure code may take only types from the store (import type)`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('runs SQL only in src/store', () => {
    const wrong: string[] = [];
    for (const [file, { queries }] of parsed) {
      if (file.startsWith('store/') || file in SQL_ALLOWED) continue;
      for (const q of queries) wrong.push(`src/${q.file}:${q.line} runs ${q.text}: move the query into a src/store module`);
    }
    expect(wrong).toEqual([]);
  });

  it('lists only files that still hold SQL as exceptions', () => {
    const stale = Object.keys(SQL_ALLOWED).filter((f) => !parsed.has(f) || parsed.get(f)!.queries.length === 0);
    expect(stale, 'remove these from SQL_ALLOWED').toEqual([]);
  });

  it('has no import cycle', () => {
    const edges = new Map<string, Import[]>();
    for (const [file, { imports }] of parsed) edges.set(file, imports.filter((i) => i.target && parsed.has(i.target)));
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: Import[] = [];
    const walk = (file: string) => {
      state.set(file, 'open');
      for (const i of edges.get(file)!) {
        const t = i.target!;
        if (state.get(t) === 'open') {
          const start = stack.findIndex((s) => s.from === t);
          const loop = [...stack.slice(start < 0 ? stack.length : start), i];
          cycles.push(loop.map(show).join(' → '));
        } else if (!state.has(t)) {
          stack.push(i);
          walk(t);
          stack.pop();
        }
      }
      state.set(file, 'done');
    };
    for (const file of edges.keys()) if (!state.has(file)) walk(file);
    expect(cycles).toEqual([]);
  });

  it('finds type-only imports, dynamic imports and queries', () => {
    const sample = parse(
      path.join(SRC, 'store', 'sample.ts'),
      "import type { A } from '../api/x.js';\nimport { b } from './y.js';\nconst m = await import('../push/z.js');\nconst r = await this.sql<{ n: number }[]>`SELECT 1`;\nawait tx.unsafe('SELECT 2');\n",
    );
    expect(sample.imports.map((i) => [i.target, i.typeOnly, i.line])).toEqual([
      ['api/x.ts', true, 1],
      ['store/y.ts', false, 2],
      ['push/z.ts', false, 3],
    ]);
    expect(sample.queries.map((q) => q.line)).toEqual([4, 5]);
  });
});
