import type { Body } from './world.js';

// JSON text with things JSON.stringify cannot write: raw number tokens, escapes of lone surrogates, raw
// bytes that are not UTF-8, NUL bytes, keys replaced by any of those. A value (or key) is first set to a
// unique marker string; rendering swaps the marker's JSON text for the raw bytes.

export type Path = (string | number)[];

let markerCount = 0;
export const marker = () => `\u0001M${markerCount++}\u0001`;

export interface Injection {
  marker: string;
  /** The bytes that replace the marker's quoted JSON text. */
  raw: Buffer | string;
}

/** Renders `value` with each marker (as value or key) replaced by its raw text. */
export function render(value: unknown, injections: Injection[] = [], space?: number): Buffer {
  let parts: (string | Buffer)[] = [JSON.stringify(value, null, space)];
  for (const { marker: m, raw } of injections) {
    const needle = JSON.stringify(m);
    const next: (string | Buffer)[] = [];
    for (const part of parts) {
      if (typeof part !== 'string') {
        next.push(part);
        continue;
      }
      const pieces = part.split(needle);
      pieces.forEach((piece, i) => {
        if (i > 0) next.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw);
        next.push(piece);
      });
    }
    parts = next;
  }
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function getAt(root: unknown, path: Path): unknown {
  let node: any = root;
  for (const key of path) node = node?.[key];
  return node;
}

export function setAt(root: Body, path: Path, value: unknown): void {
  if (path.length === 0) throw new Error('cannot set the root');
  let parent: any = root;
  for (const key of path.slice(0, -1)) {
    if (parent[key] === null || typeof parent[key] !== 'object') parent[key] = {};
    parent = parent[key];
  }
  parent[path[path.length - 1]!] = value;
}

export function deleteAt(root: Body, path: Path): void {
  const parent: any = getAt(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}

/** Renames the key at `path` to `name`, keeping its value and the key order. */
export function renameKey(root: Body, path: Path, name: string): void {
  const parent: any = getAt(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent) || typeof key !== 'string') return;
  const entries = Object.entries(parent);
  for (const k of Object.keys(parent)) delete parent[k];
  for (const [k, v] of entries) parent[k === key ? name : k] = v;
}

/** Every path in `root` (not the root itself), depth-first. */
export function paths(root: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (root !== null && typeof root === 'object') {
    for (const [key, value] of Object.entries(root)) {
      const path = [...prefix, Array.isArray(root) ? Number(key) : key];
      out.push(path, ...paths(value, path));
    }
  }
  return out;
}

export const stringPaths = (root: unknown) => paths(root).filter((p) => typeof getAt(root, p) === 'string');
export const numberPaths = (root: unknown) => paths(root).filter((p) => typeof getAt(root, p) === 'number');
export const objectPaths = (root: unknown): Path[] => [[], ...paths(root).filter((p) => { const v = getAt(root, p); return v !== null && typeof v === 'object' && !Array.isArray(v); })];
/** Paths whose last step is an object key (so the key itself can be replaced). */
export const keyPaths = (root: unknown) => paths(root).filter((p) => typeof p[p.length - 1] === 'string');

/** `depth` nested arrays (`[[[…]]]`) or objects (`{"a":{"a":…}}`) as JSON text. */
export function nested(depth: number, kind: 'array' | 'object', leaf = '1'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

/** The same value as a JS object (for signing it), built without recursion. */
export function nestedValue(depth: number, kind: 'array' | 'object', leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}
