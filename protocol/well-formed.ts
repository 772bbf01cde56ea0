/** How deep any JSON body may nest; the deepest legitimate body (a pact spec with terms) needs far less. */
export const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Why `value` (parsed JSON) cannot be canonicalized and signed as RFC 8785 requires, or undefined when it
 * can: nesting deeper than MAX_JSON_DEPTH, a string or key holding a lone UTF-16 surrogate (which has
 * no UTF-8 form), or a number beyond what a double holds (`1e400` parses to Infinity, which JCS refuses). Iterative, so no depth can overflow the stack.
 */
export function wellFormedProblem(value: unknown): string | undefined {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return 'a string holds a lone UTF-16 surrogate';
      continue;
    }
    if (typeof current === 'number' && !Number.isFinite(current)) return 'a number is too large for JSON to keep (it has no canonical form)';
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= MAX_JSON_DEPTH) return `JSON nests deeper than ${MAX_JSON_DEPTH} levels`;
    for (const [key, item] of Object.entries(current)) {
      if (LONE_SURROGATE.test(key)) return 'a key holds a lone UTF-16 surrogate';
      pending.push({ value: item, depth: depth + 1 });
    }
  }
  return undefined;
}
