/**
 * Calls every listener with `value`. One that throws is logged, naming `what` it was told of, and keeps
 * neither the others nor the teller from going on: a listener's failure is its own.
 */
export function tellEach<T>(listeners: Iterable<(value: T) => void>, value: T, what: string): void {
  for (const listener of listeners) {
    try {
      listener(value);
    } catch (error) {
      console.error(`a listener failed on ${what}:`, String(error));
    }
  }
}
