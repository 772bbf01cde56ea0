import type { Progress } from '../pact-client.js';

/** The process's streams, so commands can be run (and tested) with others. */
export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });

/** All of stdin, as bytes (at a terminal, after saying how to end it). */
export async function readStdin(io: Io): Promise<Buffer> {
  if (io.stdin.isTTY) io.stderr.write('reading stdin: paste, then Ctrl-D on an empty line (or use --file)\n');
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

/** A bar on stderr while bytes move, only when stderr is a terminal. */
export function progressBar(io: Io, label: string): { update: Progress; done: () => void } {
  if (!io.stderr.isTTY) return { update: () => {}, done: () => {} };
  const width = 30;
  const update: Progress = (done, total) => {
    const share = total ? Math.min(done / total, 1) : 0;
    const bar = total ? `[${'#'.repeat(Math.round(share * width)).padEnd(width)}] ${Math.round(share * 100)}%` : '';
    io.stderr.write(`\r${label} ${bar} ${formatBytes(done)}${total ? ` / ${formatBytes(total)}` : ''}   `);
  };
  return { update, done: () => io.stderr.write('\n') };
}

/** A spinner on stderr while `work` runs, only when stderr is a terminal. */
export async function withSpinner<T>(io: Io, label: string, work: Promise<T>): Promise<T> {
  if (!io.stderr.isTTY) return work;
  const frames = ['|', '/', '-', '\\'];
  let frame = 0;
  const timer = setInterval(() => io.stderr.write(`\r${frames[frame++ % frames.length]} ${label}`), 100);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    io.stderr.write(`\r${' '.repeat(label.length + 2)}\r`);
  }
}

/**
 * A secret typed at a terminal without echo, or the first line of stdin when it is not a terminal. Secrets are
 * never read from argv or the environment, where other processes and shell histories see them.
 */
export async function readSecret(io: Io, prompt: string): Promise<string> {
  if (!io.stdin.isTTY || !io.stdin.setRawMode) return firstLine(io.stdin);
  io.stdin.setRawMode(true); // before the prompt: keys typed the moment it shows must not echo
  io.stderr.write(prompt);
  try {
    return await typedLine(io.stdin);
  } finally {
    io.stdin.setRawMode(false);
    io.stdin.pause();
    io.stderr.write('\n');
  }
}

/** The first line of a stream, as soon as it has come (a pipe need not close). */
async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!.trim();
}

/** Keys typed in raw mode (nothing echoed) up to Enter; Backspace erases, Ctrl-C and Ctrl-D give up. */
function typedLine(input: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return finish(() => resolve(typed));
        if (char === '\u0003' || char === '\u0004') return finish(() => reject(new Error('cancelled')));
        typed = char === '\u007f' || char === '\b' ? typed.slice(0, -1) : typed + char;
      }
    };
    const finish = (settle: () => void) => {
      input.off('data', onData);
      settle();
    };
    input.on('data', onData);
    input.resume();
  });
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
