import { spawn } from 'node:child_process';

// `npm test`: the suite as two uvu processes at once, tests/http/ and the rest. Most tests wait on servers,
// timers and disks, not on a core, so two at a time on this 2-core machine takes far less wall time than one
// after the other. Each shard's output is printed whole when it ends (with its own uvu summary, which .ci/run
// adds up); the exit code fails if either shard fails.

const UVU = ['--import', 'tsx', './node_modules/uvu/bin.js', 'tests'];
const shards: { name: string; args: string[] }[] = [
  { name: 'tests/http', args: ['^http/.*\\.test\\.ts$'] },
  { name: 'tests without http', args: ['\\.test\\.ts$', '--ignore', '^http'] },
];

function run({ name, args }: (typeof shards)[number]): Promise<number> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [...UVU, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' } });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(output));
      process.stdout.write(`\n${name}: exit ${code}, ${Math.round((Date.now() - started) / 1000)} s\n\n`);
      done(code ?? 1);
    });
  });
}

const codes = await Promise.all(shards.map(run));
process.exit(codes.every((code) => code === 0) ? 0 : 1);
