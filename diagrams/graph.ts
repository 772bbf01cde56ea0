import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { toDirectedGraph, type DirectedGraphNode } from 'xstate/graph';
import { guardText } from './guards.js';
import { edgeLabel, eventText, triggerOf, type Trigger } from './triggers.js';

/** A state as drawn. The machine itself is the root state, whose id is the machine's id. */
export interface DiagramState {
  /** The state's path, dot-separated as XState writes state values (`CREATED`, `A.B`); the root: the machine's id. */
  readonly id: string;
  readonly key: string;
  /** Its name in the Mermaid text and in the SVG (`data-id`): the path joined by `__`, letters, digits and `_` only. */
  readonly diagramId: string;
  readonly kind: AnyStateNode['type'];
  /** The id of the child entered first, for a compound state. */
  readonly initial: string | undefined;
  readonly children: readonly DiagramState[];
}

/** One transition to one target. A transition without a target (the state stays) is an edge to its own source. */
export interface DiagramEdge {
  readonly source: string;
  readonly target: string;
  /** `fund`, `after 5000 ms`, `always`. */
  readonly event: string;
  readonly trigger: Trigger;
  readonly guard: string | undefined;
  /** `event [guard]`. */
  readonly label: string;
}

/** A machine as a small graph: its states (a tree) and every transition, in the order they are defined. */
export interface MachineGraph {
  readonly name: string;
  readonly root: DiagramState;
  readonly edges: readonly DiagramEdge[];
}

interface TransitionLike {
  readonly eventType: string;
  readonly delay?: number | string;
  readonly guard?: unknown;
  readonly target?: readonly AnyStateNode[] | undefined;
}

export function machineGraph(name: string, machine: AnyStateMachine): MachineGraph {
  const directed = toDirectedGraph(machine);
  return { name, root: stateOf(directed), edges: edgesOf(directed) };
}

function stateOf(node: DirectedGraphNode): DiagramState {
  const { stateNode } = node;
  const initial = stateNode.type === 'compound' ? stateNode.initial.target[0] : undefined;
  return {
    id: stateId(stateNode),
    key: stateNode.key,
    diagramId: diagramId(stateNode),
    kind: stateNode.type,
    initial: initial ? stateId(initial) : undefined,
    children: node.children.map(stateOf),
  };
}

function edgesOf(node: DirectedGraphNode): DiagramEdge[] {
  const taken = node.edges.map((e) => edgeOf(e.transition as TransitionLike, node.stateNode, e.target));
  // `toDirectedGraph` leaves out eventless (`always`) transitions; they are read from the state node.
  const eventless = (node.stateNode.always ?? []).flatMap((t) =>
    (t.target ?? [node.stateNode]).map((target) => edgeOf(t as TransitionLike, node.stateNode, target)),
  );
  return [...taken, ...eventless, ...node.children.flatMap(edgesOf)];
}

function edgeOf(transition: TransitionLike, source: AnyStateNode, target: AnyStateNode): DiagramEdge {
  const event = eventText(transition);
  const guard = transition.guard === undefined ? undefined : guardText(transition.guard);
  return {
    source: stateId(source),
    target: stateId(target),
    event,
    trigger: triggerOf(transition),
    guard,
    label: edgeLabel(event, guard),
  };
}

const stateId = (node: AnyStateNode): string => (node.path.length === 0 ? node.machine.id : node.path.join('.'));

const diagramId = (node: AnyStateNode): string =>
  (node.path.length === 0 ? node.machine.id : node.path.join('__')).replace(/[^A-Za-z0-9_]/g, '_');
