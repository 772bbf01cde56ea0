import { writeFileSync } from 'node:fs';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { argument, stringOption, type Command, type Context } from '../command.js';
import { inputBytes } from '../input.js';
import { answered, CliError } from '../output.js';
import { progressBar } from '../terminal.js';

const put: Command = {
  name: 'put',
  usage: '<pactId> <file>  (- for stdin)',
  summary: 'upload evidence bytes; prints their sha256 to cite in `pact propose --blob`',
  async run(context) {
    const pactId = argument(context, 0, 'pactId');
    const bytes = await inputBytes(context, argument(context, 1, 'file'));
    const bar = progressBar(context.io, 'uploading');
    const result = await context.client.putBlob(context.key(), pactId, bytes, { declareHash: true, onProgress: bar.update }).finally(bar.done);
    context.print({ ...answered(result, 'evidence uploads'), size: bytes.length });
  },
};

const link: Command = {
  name: 'link',
  usage: '<pactId> <sha256>',
  summary: 'a short-lived download link for a blob of the pact',
  async run(context) {
    context.print(await linkOf(context));
  },
};

const download: Command = {
  name: 'download',
  usage: '<pactId> <sha256> [--out <file>]  (stdout without --out)',
  summary: 'fetch a blob of the pact and check its hash',
  options: { out: { type: 'string' } },
  async run(context) {
    const hash = argument(context, 1, 'sha256');
    const { url } = await linkOf(context);
    const bar = progressBar(context.io, 'downloading');
    const fetched = await context.client.download(url, bar.update).finally(bar.done);
    if (fetched.status !== 200) answered({ status: fetched.status, body: fetched.body, headers: new Headers() }, 'downloads');
    if (bytesToHex(sha256(fetched.bytes)) !== hash.toLowerCase()) throw new CliError(`the bytes downloaded do not hash to ${hash}; nothing was written`);
    const out = stringOption(context, 'out');
    if (out === undefined) return void context.io.stdout.write(fetched.bytes);
    writeFileSync(out, fetched.bytes);
    context.print({ hash, size: fetched.bytes.length, file: out });
  },
};

async function linkOf(context: Context): Promise<{ url: string; expiresAt: number }> {
  const [pactId, hash] = [argument(context, 0, 'pactId'), argument(context, 1, 'sha256')];
  return answered(await context.client.link(context.key(), pactId, hash.toLowerCase()), 'evidence downloads');
}

export const evidenceCommands = [put, link, download];
