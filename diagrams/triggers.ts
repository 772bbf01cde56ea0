/** What fires a transition: a named event, a timer (`after`), or nothing (`always`, taken on arrival). */
export type Trigger = 'event' | 'after' | 'always';

interface TransitionLike {
  readonly eventType: string;
  readonly delay?: number | string;
}

export function triggerOf(transition: TransitionLike): Trigger {
  if (transition.delay !== undefined) return 'after';
  return transition.eventType === '' ? 'always' : 'event';
}

/** The edge's event as a reader names it: `fund`, `after 5000 ms`, `after fundDeadline`, `always`. */
export function eventText(transition: TransitionLike): string {
  const { delay } = transition;
  if (delay !== undefined) return typeof delay === 'number' ? `after ${delay} ms` : `after ${delay}`;
  return transition.eventType === '' ? 'always' : transition.eventType;
}

/** The full edge label: the event, then the guard in brackets when there is one. */
export const edgeLabel = (event: string, guard: string | undefined): string =>
  guard === undefined ? event : `${event} [${guard}]`;
