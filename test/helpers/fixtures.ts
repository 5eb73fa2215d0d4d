import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Fixtures are read from ../shared at run time (never copied into the repo). */
export const FIXTURES_DIR = path.resolve(process.env.STACKS_FIXTURES_DIR ?? path.join(process.cwd(), '../shared/fixtures'));

export interface FixtureLine {
  id: string;
  timestamp: string;
  path: string;
  body: string;
}

export function fixtureNames(): string[] {
  return readdirSync(path.join(FIXTURES_DIR, 'events'))
    .filter((f) => f.endsWith('.tsv'))
    .map((f) => f.slice(0, -4))
    .sort();
}

export function readFixture(name: string): FixtureLine[] {
  const text = readFileSync(path.join(FIXTURES_DIR, 'events', `${name}.tsv`), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const a = l.indexOf('\t');
      const b = l.indexOf('\t', a + 1);
      const c = l.indexOf('\t', b + 1);
      return { id: l.slice(0, a), timestamp: l.slice(a + 1, b), path: l.slice(b + 1, c), body: l.slice(c + 1) };
    });
}

export function readGolden<T = unknown>(file: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'golden', file), 'utf8')) as T;
}

/** fixtures/golden-ext: the reference's answers for the endpoint families being added (golden-ext/README.md). */
export function readGoldenExt<T = unknown>(file: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'golden-ext', file), 'utf8')) as T;
}

/** The golden-ext answer files (scenario names, `_empty-db` included). */
export function goldenExtNames(): string[] {
  return readdirSync(path.join(FIXTURES_DIR, 'golden-ext'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}
