import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../../actors/journal.js';
import { connectNats, type Nats } from '../../actors/nats.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { forget, reapOnExit } from './reaper.js';

/** A private nats-server with the journal, and a LevelDB, in one temp directory: what actor and projector tests run on. */
export interface JournalBench {
  root: string;
  server: NatsServerProcess;
  nats: Nats;
  journal: Journal;
  level: JsonLevel;
  stop(): Promise<void>;
}

export async function startJournalBench(name: string): Promise<JournalBench> {
  const root = mkdtempSync(join(tmpdir(), `pact-${name}-`));
  const server = await startNatsServer(join(root, 'nats'));
  reapOnExit(server.pid); // a test process that dies leaves no nats-server behind
  const nats = await connectNats({ url: server.url });
  const level = await openLevel(join(root, 'level'));
  return {
    root, server, nats, level,
    journal: new Journal(nats.publisher, nats.jsm),
    async stop() {
      await nats.nc.close();
      await level.close();
      await server.stop();
      forget(server.pid);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
