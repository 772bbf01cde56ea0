/** A guard as a transition holds it: a name, `{ type }`, an inline function, or `and`/`or`/`not` of guards. */
type Guard = string | { type: string } | GuardFunction;
type GuardFunction = ((...args: never[]) => unknown) & { guards?: readonly Guard[] };

const COMBINATORS = new Set(['and', 'or', 'not']);

/** How a guard reads on an edge: its name, `a and b`, `not a`; an unnamed inline function reads `inline`. */
export function guardText(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return functionText(guard as GuardFunction);
  if (guard !== null && typeof guard === 'object' && 'type' in guard) return String(guard.type);
  return 'unknown';
}

function functionText(guard: GuardFunction): string {
  if (guard.guards && COMBINATORS.has(guard.name)) return combined(guard.name, guard.guards);
  // An arrow function written as `guard: (…) => …` is named after the property.
  return guard.name && guard.name !== 'guard' ? guard.name : 'inline';
}

function combined(combinator: string, guards: readonly Guard[]): string {
  const parts = guards.map((g) => (isAndOr(g) ? `(${guardText(g)})` : guardText(g)));
  return combinator === 'not' ? `not ${parts[0]}` : parts.join(` ${combinator} `);
}

const isAndOr = (guard: Guard): boolean =>
  typeof guard === 'function' && guard.guards !== undefined && (guard.name === 'and' || guard.name === 'or');
