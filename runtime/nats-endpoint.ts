import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { serversOf } from '../actors/nats.js';
import type { Config } from './config.js';
import { startNatsServer } from './nats-server.js';

async function answers(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: serversOf(url), timeout: 1_500, reconnect: false });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * The NATS to use: NATS_URL when given (it must answer); else the default when it answers; else a private
 * nats-server with its store under the data directory, reused across restarts while it still runs.
 */
export async function natsEndpoint(config: Config): Promise<{ url: string; stop?: () => Promise<void> }> {
  if (await answers(config.natsUrl)) return { url: config.natsUrl };
  if (config.natsUrlGiven) throw new Error(`NATS at ${config.natsUrl} does not answer`);
  const record = join(config.dataDir, 'nats-server.json');
  if (existsSync(record)) {
    const { url } = JSON.parse(readFileSync(record, 'utf8')) as { url: string };
    if (await answers(url)) return { url };
  }
  const server = await startNatsServer(join(config.dataDir, 'nats'));
  writeFileSync(record, JSON.stringify({ url: server.url, pid: server.pid }));
  return { url: server.url, stop: server.stop };
}
