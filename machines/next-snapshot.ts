import { createActor, type AnyActorScope, type AnyStateMachine, type EventFromLogic, type SnapshotFrom } from 'xstate';

const scopes = new WeakMap<AnyStateMachine, AnyActorScope>();

/**
 * The snapshot `machine` moves to from `snapshot` on `event`: XState's pure `transition`, less the throw-away
 * actor it builds on every call (whose constructor works out the machine's initial snapshot: three quarters
 * of the time of a pact's transition). Our machines only assign (no effects to collect, no children), so
 * one inert scope per machine, made once, serves every call and gives the same snapshot.
 */
export function nextSnapshot<M extends AnyStateMachine>(machine: M, snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): SnapshotFrom<M> {
  let scope = scopes.get(machine);
  if (!scope) scopes.set(machine, (scope = inertScope(machine)));
  return machine.transition(snapshot, event, scope) as SnapshotFrom<M>;
}

function inertScope(machine: AnyStateMachine): AnyActorScope {
  const self = createActor(machine);
  const ignore = () => undefined;
  return { self, id: '', sessionId: '', system: self.system, logger: ignore, defer: ignore, emit: ignore, stopChild: ignore, actionExecutor: ignore };
}
