import type { DiagramEdge, DiagramState, MachineGraph } from './graph.js';

/** The graph, with each state's Mermaid name at hand. */
interface Drawing {
  readonly edges: readonly DiagramEdge[];
  readonly names: ReadonlyMap<string, string>;
}

/**
 * The graph as a Mermaid `stateDiagram-v2`. Each block declares its states, then where it starts, then the
 * transitions out of its states.
 * Transitions defined on the machine itself (taken in any state) are drawn on a frame named after the
 * machine around all the states; a machine without such transitions has no frame.
 */
export function toMermaid(graph: MachineGraph): string {
  const { root, edges } = graph;
  const drawing = { edges, names: diagramIds(root) };
  const framed = edges.some((e) => e.source === root.id);
  const lines = framed ? frame(drawing, root) : block(drawing, root, '  ');
  return ['stateDiagram-v2', ...lines].join('\n') + '\n';
}

function frame(drawing: Drawing, root: DiagramState): string[] {
  return [
    `  [*] --> ${root.diagramId}`,
    `  state ${root.diagramId} {`,
    ...block(drawing, root, '    '),
    '  }',
    ...edgesFrom(drawing, root, '  '),
  ];
}

/** What a compound state holds: where it starts, its children, and the transitions out of them. */
function block(drawing: Drawing, parent: DiagramState, indent: string): string[] {
  const initial = parent.children.find((c) => c.id === parent.initial);
  return [
    ...parent.children.flatMap((child) => declaration(drawing, child, indent)),
    ...(initial ? [`${indent}[*] --> ${initial.diagramId}`] : []),
    ...parent.children.flatMap((child) => edgesFrom(drawing, child, indent)),
  ];
}

/**
 * A state shown by its key under its Mermaid name (a nested state's carries its path). Declared before any
 * transition names it, and with `as`: a state that no transition names is drawn only when declared so.
 */
function declaration(drawing: Drawing, state: DiagramState, indent: string): string[] {
  if (state.children.length > 0) {
    return [`${indent}state ${state.diagramId} {`, ...block(drawing, state, indent + '  '), `${indent}}`];
  }
  const named = `${indent}state "${state.key.replace(/"/g, "'")}" as ${state.diagramId}`;
  return state.kind === 'final' ? [named, `${indent}${state.diagramId} --> [*]`] : [named];
}

function edgesFrom(drawing: Drawing, state: DiagramState, indent: string): string[] {
  const { edges, names } = drawing;
  return edges
    .filter((e) => e.source === state.id)
    .map((e) => `${indent}${names.get(e.source)} --> ${names.get(e.target)}: ${labelText(e)}`);
}

function diagramIds(state: DiagramState, into = new Map<string, string>()): Map<string, string> {
  into.set(state.id, state.diagramId);
  for (const child of state.children) diagramIds(child, into);
  return into;
}

/** Mermaid reads a transition's label to the end of the line; `;` and `#` would end or escape it. */
const labelText = (edge: DiagramEdge): string => edge.label.replace(/[;#\r\n]/g, ' ');
