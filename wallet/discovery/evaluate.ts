import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ranked } from './rank.js';

export interface LabelledTask {
  task: string;
  expected: string;
}

/** The labelled tasks shipped beside the ranking (wallet/discovery/labelled-tasks.json). */
export const labelledTasks = (): LabelledTask[] =>
  (JSON.parse(readFileSync(join(import.meta.dirname, 'labelled-tasks.json'), 'utf8')) as { tasks: LabelledTask[] }).tasks;

/** Hit rate at 1 and at 3: the share of tasks whose expected capability is the first result, or among the first three capabilities. */
export async function hitRates(tasks: LabelledTask[], discover: (task: string) => Promise<Ranked[]>): Promise<{ at1: number; at3: number; misses: { task: string; expected: string; got: string[] }[] }> {
  let at1 = 0;
  let at3 = 0;
  const misses: { task: string; expected: string; got: string[] }[] = [];
  for (const { task, expected } of tasks) {
    const capabilities = [...new Set((await discover(task)).map((result) => result.capabilityId))];
    if (capabilities[0] === expected) at1++;
    if (capabilities.slice(0, 3).includes(expected)) at3++;
    else misses.push({ task, expected, got: capabilities.slice(0, 3) });
  }
  return { at1: at1 / tasks.length, at3: at3 / tasks.length, misses };
}
