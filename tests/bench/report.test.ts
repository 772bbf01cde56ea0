import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpuPerRequestLines } from '../../bench/report.js';

// The bench's CPU bound: each process's CPU per request, their sum, and what the cores could answer at that cost.

const cpu = { seconds: new Map([['pact service', 1.2], ['nats-server', 0.3]]), wallMs: 1_000 };

test('each process per request, the sum, and the most the cores could answer at that cost', () => {
  const lines = cpuPerRequestLines(cpu, 1_000, 2).map((line) => line.replace(/\s+/g, ' '));
  assert.equal(lines, [
    'pact service 1,200 µs',
    'nats-server 300 µs',
    "all of them 1,500 µs: the machine's 2 cores at 100% would answer at most 1,333.3 /s",
  ]);
});

test('a phase with no answer says so rather than divide by zero', () => {
  assert.equal(cpuPerRequestLines(cpu, 0, 2), ['no request was answered']);
});

test.run();
