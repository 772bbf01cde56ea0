import { fileURLToPath } from 'node:url';
import { machineGraph, type MachineGraph } from './graph.js';
import { indexPage } from './index-page.js';
import { toMermaid } from './mermaid.js';
import { MACHINES, type MachineEntry } from './registry.js';
import { mermaidToSvg } from './svg.js';

/** Where `npm run machines` writes the diagrams. */
export const DIAGRAMS_DIR = fileURLToPath(new URL('../docs/machines/', import.meta.url));

/** One machine drawn: its graph, its Mermaid text and its SVG, as written to docs/machines/<name>.mmd|.svg. */
export interface RenderedMachine {
  readonly name: string;
  readonly source: string;
  readonly graph: MachineGraph;
  readonly mermaid: string;
  readonly svg: string;
}

/** Every machine of the project drawn in memory (nothing read or written): for docs/machines/ and web pages. */
export async function renderMachines(entries: readonly MachineEntry[] = MACHINES): Promise<RenderedMachine[]> {
  return entries.map(renderMachine);
}

export function renderMachine(entry: MachineEntry): RenderedMachine {
  const graph = machineGraph(entry.name, entry.machine);
  const mermaid = toMermaid(graph);
  return { name: entry.name, source: entry.source, graph, mermaid, svg: mermaidToSvg(mermaid) };
}

/** The contents of docs/machines/: file name → text. */
export async function diagramFiles(entries: readonly MachineEntry[] = MACHINES): Promise<Map<string, string>> {
  const files = new Map<string, string>([['README.md', indexPage(entries)]]);
  for (const machine of await renderMachines(entries)) {
    files.set(`${machine.name}.mmd`, machine.mermaid);
    files.set(`${machine.name}.svg`, machine.svg);
  }
  return files;
}
