import { pactMachine } from '../machines/pact/machine.js';
import type { Committed } from '../projection/projector.js';

/**
 * PACT_INSPECT=1 (development only): every pact transition this node's actor host commits goes to the Stately
 * inspector. `@statelyai/inspect`'s sky inspector prints a link to open in a browser with internet; it sends the
 * pact records to stately.ai, so it is off by default. The actors run the machine as pure transitions, not as
 * XState actors, so each pact is reported by hand: registered once (with the machine's definition, which the
 * inspector draws), then its events and snapshots.
 */
export async function startInspection(): Promise<(committed: Committed) => void> {
  const { createSkyInspector } = await import('@statelyai/inspect');
  const inspector = createSkyInspector({ onerror: (error) => console.error('the Stately inspector:', error.message) });
  const definition = JSON.stringify(pactMachine.config);
  const registered = new Set<string>();
  return ({ entry, record }) => {
    try {
      const actor = `pact:${entry.pactId}`;
      const snapshot = { status: 'active' as const, value: record.pact.state, context: record.pact };
      if (!registered.has(actor)) {
        registered.add(actor);
        inspector.actor(actor, snapshot, { definition });
      }
      inspector.event(actor, entry.event);
      inspector.snapshot(actor, snapshot, { event: entry.event });
    } catch (error) {
      console.error('the Stately inspector:', String(error)); // a development aid never stands in a commit's way
    }
  };
}
