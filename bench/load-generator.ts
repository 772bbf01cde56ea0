import type { ChildProcess } from 'node:child_process';
import { forkBenchModule, nextMessage, stopChild } from './children.js';
import type { FromWorker, Job, Measured, ToWorker } from './jobs.js';
import { cpuUsedDuring, type CpuUse, type Processes } from './processes.js';

/** The bench's handle on its load generator process (bench/worker/main.ts). */
export class LoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  static start(): LoadGenerator {
    return new LoadGenerator(forkBenchModule('worker/main.ts'));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Has the worker sign and ready `job`; nothing is sent yet. */
  async prepare(job: Job): Promise<void> {
    await this.ask({ job });
  }

  /** Sends the prepared job's requests and resolves to what the worker measured. */
  async go(): Promise<Measured> {
    const answer = await this.ask({ go: true });
    if (!('measured' in answer)) throw new Error('load generator answered go without measurements');
    return answer.measured;
  }

  /**
   * Runs `job` and reports, beside the measurements, the CPU each of `processes` used while its requests went,
   * and when they began (epoch ms).
   */
  async timed(job: Job, processes: Processes): Promise<{ measured: Measured; cpu: CpuUse; startedAt: number }> {
    await this.prepare(job);
    const { result, cpu, startedAt } = await cpuUsedDuring(processes, () => this.go());
    return { measured: result, cpu, startedAt };
  }

  async run(job: Job): Promise<Measured> {
    await this.prepare(job);
    return this.go();
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }

  private async ask(message: ToWorker): Promise<FromWorker> {
    const answer = nextMessage<FromWorker>(this.child);
    this.child.send(message);
    const received = await answer;
    if ('error' in received) throw new Error(`load generator: ${received.error}`);
    return received;
  }
}
