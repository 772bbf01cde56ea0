import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { PactClient } from '../../client/pact-client.js';
import type { Pact } from '../../machines/pact/types.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import { SERVICE_ENV, SERVICE_NODE_ARGS } from '../../runtime/launch.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { forget, reapOnExit } from './reaper.js';
import { ServiceProcess } from './service-process.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** Tests drive many calls from one address; tests/http/rate-limits.test.ts turns the limits on. */
const NO_RATE_LIMITS = { PACT_RATE_LIMIT_WRITES: '0', PACT_RATE_LIMIT_POKES: '0', PACT_RATE_LIMIT_LISTS: '0', PACT_RATE_LIMIT_PULLS: '0', PACT_RATE_LIMIT_ACCESS: '0', WALLET_RATE_LIMIT_CREATES: '0', WALLET_RATE_LIMIT_CLAIMS: '0' };

/**
 * A private nats-server and the real service started as `npm start` does (a child process running
 * runtime/main.ts), with test hooks on and a known evaluator key. Everything lives in one temp directory.
 */
export class Stack {
  readonly evaluator: KeyPair = generateKeyPair();
  private child: ChildProcess | undefined;
  private log = '';
  /** 0 until the first start, where the server picks a free port; restarts keep that port. */
  private port = 0;
  private walletPort = 0;
  private pactClient: PactClient | undefined;

  private constructor(
    readonly root: string,
    readonly natsUrl: string,
    /** The private nats-server, when the stack started its own. */
    private nats: NatsServerProcess | undefined,
    private env: Record<string, string>,
    private readonly nodeArgs: string[],
  ) {
    writeFileSync(join(root, 'evaluator.seed'), bytesToHex(this.evaluator.secretKey));
  }

  get client(): PactClient {
    // Tests see every refusal as it is: no nonce retries.
    this.pactClient ??= new PactClient(`http://127.0.0.1:${this.port}`, { nonceRetries: 0 });
    return this.pactClient;
  }

  /** The server's clock as last seen through the test hook (signed calls are stamped with wall time, as a client's are). */
  now = Date.now();

  /**
   * `env` adds to the server's environment; `nodeArgs` go to its node (e.g. `--cpu-prof`); `natsUrl` points
   * it at a NATS the caller runs (a cluster), else the stack starts a private nats-server.
   */
  static async start(options: { env?: Record<string, string>; nodeArgs?: string[]; natsUrl?: string } = {}): Promise<Stack> {
    const root = mkdtempSync(join(tmpdir(), 'pact-test-'));
    const nats = options.natsUrl ? undefined : await startNatsServer(join(root, 'nats'));
    reapOnExit(nats?.pid);
    const stack = new Stack(root, options.natsUrl ?? nats!.url, nats, options.env ?? {}, options.nodeArgs ?? []);
    try {
      await stack.startServer();
    } catch (error) {
      await stack.stop(); // a service that would not start leaves no nats-server behind
      throw error;
    }
    return stack;
  }

  get dataDir(): string {
    return join(this.root, 'data');
  }

  get url(): string {
    return this.client.baseUrl;
  }

  /** The credit wallet service of this stack (its own port). */
  get walletUrl(): string {
    return `http://127.0.0.1:${this.walletPort}`;
  }

  /** The pid of the running service process (the bench reads its CPU time and memory from /proc). */
  /** The server process's exit code once it has exited (null while it runs, or when a signal ended it). */
  get serverExitCode(): number | null {
    return this.child?.exitCode ?? null;
  }

  get serverPid(): number | undefined {
    return this.child?.pid;
  }

  /** The stack's own nats-server; undefined when the stack runs on a NATS the caller started. */
  get natsPid(): number | undefined {
    return this.nats?.pid;
  }

  async startServer(): Promise<void> {
    this.log = '';
    const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, ...this.nodeArgs, '--import', 'tsx', 'runtime/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...SERVICE_ENV,
        PACT_PORT: String(this.port),
        WALLET_PORT: String(this.walletPort),
        PACT_DATA_DIR: this.dataDir,
        NATS_URL: this.natsUrl,
        PACT_TEST_HOOKS: '1',
        PACT_EVALUATOR_KEY_FILE: join(this.root, 'evaluator.seed'),
        // Tests that do not ask for an evaluator post verdicts by hand (mode none names the pinned model).
        PACT_EVALUATOR_MODE: 'none',
        PACT_EVALUATOR_MODEL: 'sandbox',
        ...NO_RATE_LIMITS,
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    reapOnExit(child.pid);
    await new Promise<void>((done, fail) => {
      const onData = (chunk: Buffer) => {
        this.log += chunk.toString();
        const listening = /pact listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(this.log);
        const wallet = /wallet listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(this.log);
        if (!listening || !wallet) return;
        this.port = Number(listening[1]);
        this.walletPort = Number(wallet[1]);
        done();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
      child.once('exit', (code) => fail(new Error(`server exited with ${code}:\n${this.log}`)));
    });
  }

  /** Stops the stack's own nats-server, runs `during`, and starts it again on the same port and store. */
  async natsOutage<T>(during: () => Promise<T>): Promise<T> {
    const nats = this.nats!;
    await nats.stop();
    forget(nats.pid);
    try {
      return await during();
    } finally {
      this.nats = await startNatsServer(join(this.root, 'nats'), ['-p', new URL(this.natsUrl).port]);
      reapOnExit(this.nats.pid);
    }
  }

  /** Stops the server and starts it again with `env` added to its environment. */
  async restartWith(env: Record<string, string>): Promise<void> {
    await this.kill('SIGTERM');
    this.env = { ...this.env, ...env };
    await this.startServer();
  }

  /**
   * Restarts the server armed to crash at `point`, sends `call`, which must get no answer (the process kills
   * itself there), and starts it again unarmed.
   */
  async crashDuring(point: string, call: () => Promise<unknown>): Promise<void> {
    await this.restartWith({ PACT_TEST_CRASH_AT: point });
    const answer = await call().then(
      (reply) => `answered ${(reply as { status?: number }).status}`,
      () => 'no answer',
    );
    if (answer !== 'no answer') throw new Error(`the call ${answer} instead of meeting the crash at ${point}`);
    await this.exited();
    await this.restartWith({ PACT_TEST_CRASH_AT: '' });
  }

  /** Resolves once the server process has exited on its own (a crash point), failing after `timeoutMs`. */
  async exited(timeoutMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`the server did not exit within ${timeoutMs} ms:\n${this.log}`)), timeoutMs);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  }

  /** Kills the server process (SIGKILL by default) and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill(signal);
      await exited;
    }
    forget(child.pid);
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
    await this.nats?.stop();
    forget(this.nats?.pid);
    rmSync(this.root, { recursive: true, force: true });
  }

  /** `npm run evaluator` against this stack, with its evaluator key; resolves once it follows the journal. */
  async startEvaluatorProcess(env: Record<string, string>): Promise<ServiceProcess> {
    const evaluator = ServiceProcess.run(process.execPath, ['--import', 'tsx', 'runtime/evaluator-main.ts'], {
      NATS_URL: this.natsUrl,
      PACT_EVALUATOR_SERVICE_URL: this.url,
      PACT_EVALUATOR_KEY_FILE: join(this.root, 'evaluator.seed'),
      ...env,
    });
    await evaluator.waitFor(/pact evaluator \(/);
    return evaluator;
  }

  serverLog(): string {
    return this.log;
  }

  async advanceClock(ms: number): Promise<number> {
    const { body } = await this.client.request('POST', '/__test/clock', { advanceMs: ms });
    this.now = body.now;
    return body.now;
  }

  async mockRail(body: { balances?: Record<string, string>; failNext?: string; collect?: { key: string; payer: string; amount: string } }) {
    return this.client.request('POST', '/__test/rails/mock', body);
  }

  async ledger(): Promise<{ balances: Record<string, string>; operations: { key: string; kind: string; ref: string; amount: string; to: string; from: string }[] }> {
    return (await this.client.request('GET', '/__test/rails/mock')).body;
  }

  /** Waits until the payout worker, asked after this call began, has nothing left to pay or record. */
  async payoutsIdle(timeoutMs = 15_000): Promise<void> {
    const since = Date.now();
    const deadline = since + timeoutMs;
    for (;;) {
      const { pending } = (await this.client.request('GET', '/health')).body;
      if (pending.payouts === 0 && pending.payoutsCheckedAt > since) return;
      if (Date.now() > deadline) throw new Error('payouts still pending');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until every payout of the pact is recorded as paid (the payout worker is asynchronous). */
  async settledPayouts(pactId: string, timeoutMs = 15_000): Promise<Pact> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.client.get(pactId);
      const pact = body.pact as Pact;
      if (pact.payouts.length > 0 && pact.payouts.every((p) => p.status === 'paid')) return pact;
      if (Date.now() > deadline) throw new Error(`payouts of ${pactId} not all paid: ${JSON.stringify(pact.payouts)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
