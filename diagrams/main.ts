// `npm run machines`: writes docs/machines/ (each machine as Mermaid and SVG, and an index) from the machines.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIAGRAMS_DIR, diagramFiles } from './render.js';

const started = Date.now();
const files = await diagramFiles();
mkdirSync(DIAGRAMS_DIR, { recursive: true });
for (const [name, text] of files) writeFileSync(join(DIAGRAMS_DIR, name), text);
// Everything in docs/machines/ is generated: a machine that left the registry leaves no diagram behind.
for (const name of readdirSync(DIAGRAMS_DIR)) if (!files.has(name)) rmSync(join(DIAGRAMS_DIR, name));
console.log(`docs/machines: ${[...files.keys()].join(', ')} (${Date.now() - started} ms)`);
