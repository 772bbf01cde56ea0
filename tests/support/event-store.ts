import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'uvu';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { EventStore } from '../../stream/event-store.js';

export interface EventStoreContext {
  dir: string;
  level: JsonLevel;
  store: EventStore;
}

/** Gives each test of `test` a new event store on a LevelDB of its own in a temporary directory. */
export function freshEventStoreEach(test: Test<EventStoreContext>): void {
  test.before.each(async (context) => {
    context.dir = mkdtempSync(join(tmpdir(), 'pact-events-'));
    context.level = await openLevel(context.dir);
    context.store = new EventStore(context.level);
    await context.store.open('stream made at T0');
  });
  test.after.each(async ({ dir, level }) => {
    await level.close();
    rmSync(dir, { recursive: true, force: true });
  });
}
