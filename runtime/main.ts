import { loadConfig } from './config.js';
import { startPactNode, type PactNode } from './node.js';

// SIGTERM and SIGINT stop the service and everything it started, its private nats-server included; a
// signal that comes while it starts stops it as soon as it has started.
let node: PactNode | undefined;
let stopping = false;

function stop(signal: string): void {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: closing`);
  if (node) close(node);
}

function close(started: PactNode): void {
  started.close().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

try {
  const config = loadConfig();
  node = await startPactNode(config);
  console.log(`pact using ${node.nats}`);
  console.log(`pact listening on ${node.url} (data in ${config.dataDir}${config.testHooks ? ', test hooks on' : ''})`);
  console.log(`wallet listening on ${node.walletUrl}`);
  if (config.evaluator.mode === 'sandbox' || config.evaluator.mode === 'stub') {
    console.log(`pact evaluator in ${config.evaluator.mode} mode: disputes are judged by a fixed rule, not a model (README, The evaluator); not for real money`);
  }
  if (stopping) close(node);
} catch (error) {
  console.error(`pact could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
