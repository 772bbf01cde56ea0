import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { authorizationConfig, type NatsCredentials } from '../../actors/nats-roles.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { forget, reapOnExit } from './reaper.js';

const DEPLOY = resolve(import.meta.dirname, '..', '..', 'deploy', 'nats-cluster');

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function nodeConfig(root: string, n: number, credentials: NatsCredentials | undefined): string {
  if (!credentials) return join(DEPLOY, `n${n}.conf`);
  const file = join(root, `n${n}.conf`);
  writeFileSync(file, readFileSync(join(DEPLOY, `n${n}.conf`), 'utf8') + authorizationConfig(credentials));
  return file;
}

export interface NatsCluster {
  /** All client URLs, comma-separated, as NATS_URL takes them. */
  url: string;
  nodes: NatsServerProcess[];
  stop(): Promise<void>;
}

/**
 * The 3-node JetStream cluster of deploy/nats-cluster on loopback, with the client and route ports moved
 * to free ones so that runs never collide, each node's store under `root`. With `credentials`, each node's
 * configuration gets the role users appended, as deploy/run-nats-cluster.sh does.
 */
export async function startNatsCluster(root: string, credentials?: NatsCredentials): Promise<NatsCluster> {
  const clusterPorts = [await freePort(), await freePort(), await freePort()];
  const routes = clusterPorts.map((port) => `nats-route://127.0.0.1:${port}`).join(',');
  const nodes = await Promise.all(
    clusterPorts.map((port, i) =>
      startNatsServer(join(root, `nats-n${i + 1}`), [
        '-c', nodeConfig(root, i + 1, credentials),
        '--cluster', `nats://127.0.0.1:${port}`,
        '--routes', routes,
      ]),
    ),
  );
  for (const node of nodes) reapOnExit(node.pid);
  return {
    url: nodes.map((n) => n.url).join(','),
    nodes,
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      for (const node of nodes) forget(node.pid);
    },
  };
}
