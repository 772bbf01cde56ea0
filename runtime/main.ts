import { loadConfig } from './config.js';
import { startPactNode } from './node.js';

try {
  const config = loadConfig();
  const node = await startPactNode(config);
  console.log(`pact using ${node.nats}`);
  console.log(`pact listening on ${node.url} (data in ${config.dataDir}${config.testHooks ? ', test hooks on' : ''})`);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`${signal}: closing`);
    node.close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (error) {
  console.error(`pact could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
