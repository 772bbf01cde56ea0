// The state machine diagrams (docs/machines/, `npm run machines`): the committed files are what the machines
// draw now; the graph they are drawn from has every state, every transition and every guard of each machine;
// each state can be found in the SVG; every machine of the project is drawn.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { and, createMachine, not, or, type AnyStateMachine } from 'xstate';
import type { DiagramState, MachineGraph } from '../../diagrams/graph.js';
import { MACHINES } from '../../diagrams/registry.js';
import { DIAGRAMS_DIR, diagramFiles, renderMachine, renderMachines } from '../../diagrams/render.js';

const ROOT = join(DIAGRAMS_DIR, '..', '..');
const rendered = renderMachines();

test('docs/machines/ holds, byte for byte, what the machines draw now', async () => {
  const files = await diagramFiles();
  const onDisk = readdirSync(DIAGRAMS_DIR);
  const stale = [...files].filter(([name, text]) => !onDisk.includes(name) || !readFileSync(join(DIAGRAMS_DIR, name)).equals(Buffer.from(text)));
  const leftOver = onDisk.filter((name) => !files.has(name));
  const problems = [...stale.map(([name]) => `${name} is stale or missing`), ...leftOver.map((name) => `${name} is no machine's`)];
  assert.equal(problems, [], `docs/machines/: ${problems.join('; ')}. Run \`npm run machines\` and commit docs/machines/.`);
});

test('drawing is deterministic: the same machines give the same text twice', async () => {
  const again = await renderMachines();
  assert.equal(again.map((m) => [m.mermaid, m.svg]), (await rendered).map((m) => [m.mermaid, m.svg]));
});

// What the machine's own config says, read independently of xstate/graph: states by path, and one
// `source -event-> target` line per transition target (targetless: the source), with its guard when named.
type Config = { id?: string; states?: Record<string, Config>; on?: Record<string, unknown>; after?: Record<string, unknown>; always?: unknown; type?: string };
type Expected = { source: string; event: string; target: string; guard: unknown };

function configStates(config: Config, path: string[] = []): string[] {
  return Object.entries(config.states ?? {}).flatMap(([key, child]) => [[...path, key].join('.'), ...configStates(child, [...path, key])]);
}

function configTransitions(machine: AnyStateMachine, config: Config = machine.config as Config, path: string[] = []): Expected[] {
  const source = path.length === 0 ? machine.id : path.join('.');
  const resolve = (target: unknown): string => {
    if (target === undefined) return source;
    if (typeof target !== 'string') throw new Error(`unexpected target ${String(target)}`);
    if (target.startsWith(`#${machine.id}.`)) return target.slice(machine.id.length + 2);
    return [...path.slice(0, -1), target].join('.');
  };
  const of = (event: string, value: unknown): Expected[] =>
    [value].flat().map((t) => (typeof t === 'string' ? { target: t } : (t as { target?: unknown; guard?: unknown })))
      .map((t) => ({ source, event, target: resolve(t.target), guard: t.guard }));
  return [
    ...Object.entries(config.on ?? {}).flatMap(([event, value]) => of(event, value)),
    ...Object.entries(config.after ?? {}).flatMap(([delay, value]) => of(/^\d+$/.test(delay) ? `after ${delay} ms` : `after ${delay}`, value)),
    ...(config.always === undefined ? [] : of('always', config.always)),
    ...Object.entries(config.states ?? {}).flatMap(([key, child]) => configTransitions(machine, child, [...path, key])),
  ];
}

const statesOf = (state: DiagramState): DiagramState[] => state.children.flatMap((c) => [c, ...statesOf(c)]);
const graphOf = async (name: string): Promise<MachineGraph> => (await rendered).find((m) => m.name === name)!.graph;

for (const { name, machine } of MACHINES) {
  test(`${name}: every state of the machine is in the graph`, async () => {
    const graph = await graphOf(name);
    assert.equal(statesOf(graph.root).map((s) => s.id), configStates(machine.config as Config));
    assert.is(graph.root.initial, machine.config.initial);
  });

  test(`${name}: every transition (event → target) of the machine is an edge, in order, guard and all`, async () => {
    const graph = await graphOf(name);
    const expected = configTransitions(machine);
    assert.equal(graph.edges.map((e) => `${e.source} -${e.event}-> ${e.target}`), expected.map((t) => `${t.source} -${t.event}-> ${t.target}`));
    expected.forEach((t, i) => {
      const edge = graph.edges[i]!;
      if (t.guard === undefined) assert.is(edge.guard, undefined, edge.label);
      else if (typeof t.guard === 'string') assert.is(edge.guard, t.guard, edge.label);
      assert.ok(edge.label === (edge.guard === undefined ? edge.event : `${edge.event} [${edge.guard}]`), edge.label);
    });
  });

  test(`${name}: every guard is named on its edges, and every guard the machine implements is on one`, async () => {
    const graph = await graphOf(name);
    const inline = graph.edges.filter((e) => e.guard === 'inline' || e.guard === 'unknown');
    assert.equal(inline.map((e) => e.label), [], 'name the guard in setup({ guards })');
    const shown = graph.edges.flatMap((e) => (e.guard ?? '').split(/[ ()]+/));
    const unused = Object.keys(machine.implementations.guards).filter((g) => !shown.includes(g));
    assert.equal(unused, []);
  });

  test(`${name}: each state is a <g class="node" data-id="…"> in the SVG, which loads nothing from outside`, async () => {
    const { graph, svg } = (await rendered).find((m) => m.name === name)!;
    for (const state of statesOf(graph.root)) assert.ok(svg.includes(`<g class="node" data-id="${state.diagramId}"`), state.id);
    assert.not.match(svg, /@import|url\(['"]?http|href="http/);
  });
}

test('pact: deadlines and combined guards read on the edges', async () => {
  const { mermaid } = (await rendered).find((m) => m.name === 'pact')!;
  for (const line of [
    'CREATED --> ACTIVE: fund [accepted and fundingActivates]',
    'CREATED --> ACTIVE: poke [fundDeadlineActivates]',
    'CREATED --> CANCELLED: poke [fundDeadlinePassed]',
    'ACTIVE --> CANCELLED: poke [performDeadlinePassed]',
    'PROPOSED --> SETTLED: poke [objectDeadlinePassed]',
    'DISPUTED --> CANCELLED: poke [verdictDeadlinePassed]',
    'PROPOSED --> SETTLED: cosign [accepted and lastCosign]',
    'pact --> pact: payoutsRecorded [pendingPayout]',
  ]) {
    assert.ok(mermaid.includes(`\n    ${line}\n`) || mermaid.includes(`\n  ${line}\n`), line);
  }
});

test('Mermaid: timers, eventless edges, nested, final and unreached states, guard combinators, inline guards', () => {
  const door = createMachine({
    id: 'door',
    initial: 'closed',
    states: {
      closed: {
        after: { 1000: 'open', lockDelay: { target: 'locked', guard: 'late' } },
        on: { PUSH: { target: 'open', guard: and(['unlocked', not(or(['jammed', 'blocked']))]) } },
      },
      open: {
        always: { target: 'closed', guard: { type: 'windy', params: 1 } },
        initial: 'ajar',
        states: { ajar: { on: { SWING: 'wide' } }, wide: { on: { SLAM: '#door.broken' } } },
      },
      locked: { on: { KICK: { guard: () => true } } },
      broken: { type: 'final' },
      painted: {},
    },
  });
  const { mermaid, svg } = renderMachine({ name: 'door', source: 'door.ts', summary: '', machine: door });
  assert.fixture(
    mermaid,
    [
      'stateDiagram-v2',
      '  state "closed" as closed',
      '  state open {',
      '    state "ajar" as open__ajar',
      '    state "wide" as open__wide',
      '    [*] --> open__ajar',
      '    open__ajar --> open__wide: SWING',
      '    open__wide --> broken: SLAM',
      '  }',
      '  state "locked" as locked',
      '  state "broken" as broken',
      '  broken --> [*]',
      '  state "painted" as painted',
      '  [*] --> closed',
      '  closed --> open: PUSH [unlocked and not (jammed or blocked)]',
      '  closed --> open: after 1000 ms',
      '  closed --> locked: after lockDelay [late]',
      '  open --> closed: always [windy]',
      '  locked --> locked: KICK [inline]',
      '',
    ].join('\n'),
  );
  for (const id of ['closed', 'open__ajar', 'open__wide', 'locked', 'broken', 'painted']) {
    assert.ok(svg.includes(`<g class="node" data-id="${id}"`), id);
  }
  assert.ok(svg.includes('data-id="open__ajar" data-label="ajar"'), 'a nested state is labelled with its key');
});

test('every file that creates a machine is drawn', () => {
  const sources = new Set(MACHINES.map((m) => m.source));
  const found = tsFiles(ROOT).filter((file) => readFileSync(file, 'utf8').includes('createMachine('));
  assert.equal(found.map((f) => relative(ROOT, f)).filter((f) => !sources.has(f)), [], 'add it to diagrams/registry.ts');
  assert.is(sources.size, MACHINES.length);
});

const SKIP = new Set(['node_modules', '.git', 'tests', 'diagrams', 'docs']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name) || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test.run();
