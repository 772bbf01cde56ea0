/**
 * `npm run bench:cold-blocks`: what nats-server alone costs a cold append. The journal's compare-and-set
 * (the expected last sequence of the pact's subject) makes nats-server read that subject's last message;
 * when the file block holding it (up to 8 MiB in nats-server 2.9, for a stream without limits) is no
 * longer in its memory, it loads the whole block first. A fresh nats-server, a stream shaped like the
 * journal of 100,000 stored pacts (`npm run bench` prints the journal's size), then appends to random
 * subjects one at a time. README, Benchmark.
 *
 *   COLD_BLOCKS_SUBJECTS (100000)  COLD_BLOCKS_BYTES (2650, a journal entry's mean size)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { startNatsServer } from '../runtime/nats-server.js';
import { print } from './report.js';
import { fixed, latencySummary } from './stats.js';

const SUBJECTS = Number(process.env.COLD_BLOCKS_SUBJECTS || 100_000);
const BYTES = Number(process.env.COLD_BLOCKS_BYTES || 2_650);
const FILL_IN_FLIGHT = 64;
const PROBES = 1_000;
/** Long enough for nats-server to let go of the blocks it wrote. */
const IDLE_MS = 6_000;
const STALL_MS = 5;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'pact-cold-blocks-'));
  const server = await startNatsServer(join(root, 'nats'));
  const nc = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'COLD_BLOCKS', subjects: ['cold.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    const js = jetstream(nc);
    const data = new Uint8Array(BYTES).fill(120);
    const lastSeq: number[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: FILL_IN_FLIGHT }, async () => {
      for (let i = next++; i < SUBJECTS; i = next++) lastSeq[i] = (await js.publish(`cold.${i}`, data)).seq;
    }));
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const ms: number[] = [];
    for (let probe = 0; probe < PROBES; probe++) {
      const i = Math.floor(Math.random() * SUBJECTS);
      const expect = headers();
      expect.set('Nats-Expected-Last-Subject-Sequence', String(lastSeq[i]));
      const start = performance.now();
      lastSeq[i] = (await js.publish(`cold.${i}`, data, { headers: expect })).seq;
      ms.push(performance.now() - start);
    }
    console.log(`cold blocks: a stream of ${SUBJECTS} subjects, one ${BYTES}-byte message each (${fixed((SUBJECTS * BYTES) / 2 ** 20)} MiB), idle ${IDLE_MS / 1000} s`);
    print([
      `appends with the expected last subject sequence to random subjects, one at a time  ${latencySummary(ms)}`,
      `over ${STALL_MS} ms: ${ms.filter((m) => m > STALL_MS).length} (each the first touch of a block nats-server had let go of)`,
    ]);
  } finally {
    await nc.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
