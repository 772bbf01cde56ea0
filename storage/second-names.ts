import { link, mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** LevelDB's table and log files: the ones it deletes after compactions and memtable flushes. */
const DELETED_BY_LEVELDB = /^\d+\.(ldb|sst|log)$/;

/**
 * How often new files are named and deleted ones freed. A table lives through at least three more
 * memtable flushes and a log through one, so few are deleted before their first sweep.
 */
const SWEEP_MS = 250;

/**
 * LevelDB 1.20, the version classic-level 3 bundles, deletes obsolete table and log files while it holds
 * the database's mutex (later LevelDB releases it first). Every read takes that mutex on the calling
 * thread (classic-level's implicit snapshot), so the service's main thread waited out each unlink:
 * freeing a file's blocks costs milliseconds on a disk mounted with `discard`.
 *
 * This keeps a second name (a hard link, in a sibling directory) for each of those files. LevelDB's unlink
 * then only drops a name; the blocks are freed when a later sweep, on libuv's pool and outside LevelDB's
 * lock, unlinks the second name of every file LevelDB no longer has. A file deleted before a sweep named
 * it is deleted the old way; a crash leaves second names that the first sweep after the next open frees.
 */
export class SecondNames {
  private readonly sweeper: NodeJS.Timeout;
  private sweeping: Promise<void> = Promise.resolve();

  private constructor(private readonly dir: string, readonly linksDir: string, sweepMs: number) {
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), sweepMs);
    this.sweeper.unref();
  }

  /** Starts keeping second names for the LevelDB files in `dir`, unless its filesystem has no hard links. */
  static async keep(dir: string, sweepMs = SWEEP_MS): Promise<SecondNames | undefined> {
    const linksDir = join(dirname(dir), `${basename(dir)}.second-names`);
    await mkdir(linksDir, { recursive: true });
    await freeNamesOfOtherFiles(dir, linksDir);
    const names = new SecondNames(dir, linksDir, sweepMs);
    if (await names.sweep()) return names;
    names.stop();
    return undefined;
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  /** Frees the files LevelDB deleted and names the new ones; false if the filesystem refuses a link. */
  sweep(): Promise<boolean> {
    const run = this.sweeping.then(() => this.reconcile());
    this.sweeping = run.then(() => undefined, () => undefined);
    return run;
  }

  private async reconcile(): Promise<boolean> {
    // The second names are read first: one missing from the later listing of the database was deleted,
    // as LevelDB never gives a file number twice.
    const named = await leveldbFiles(this.linksDir);
    const files = await leveldbFiles(this.dir);
    for (const name of named) if (!files.has(name)) await unlink(join(this.linksDir, name)).catch(() => undefined);
    for (const name of files) if (!named.has(name) && !(await this.name(name))) return false;
    return true;
  }

  /** Gives a file its second name; false only where the filesystem refuses hard links. */
  private async name(file: string): Promise<boolean> {
    try {
      await link(join(this.dir, file), join(this.linksDir, file));
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'EEXIST' || code === 'ENOENT'; // named already, or deleted before its first sweep
    }
  }
}

/**
 * A database made again in the same place (its directory deleted while the service was down) numbers its
 * files from the start, so a left-over second name may carry a live file's name: it is freed at open.
 */
async function freeNamesOfOtherFiles(dir: string, linksDir: string): Promise<void> {
  for (const name of await leveldbFiles(linksDir)) {
    const [file, second] = await Promise.all([stat(join(dir, name)).catch(() => undefined), stat(join(linksDir, name))]);
    if (file !== undefined && file.ino !== second.ino) await unlink(join(linksDir, name));
  }
}

async function leveldbFiles(dir: string): Promise<Set<string>> {
  return new Set((await readdir(dir)).filter((name) => DELETED_BY_LEVELDB.test(name)));
}
