import { link, mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** LevelDB's table and log files: the ones it deletes after compactions and memtable flushes. */
const DELETED_BY_LEVELDB = /^\d+\.(ldb|sst|log)$/;

/** How often new files are named and deleted ones freed; a file made and deleted between two is deleted the old way. */
const SWEEP_MS = 250;

/** Where a database's second names are: inside it, so that deleting the database deletes them (LevelDB skips the folder). */
export const secondNamesDir = (dir: string) => join(dir, 'second-names');

/**
 * LevelDB 1.20, the version classic-level 3 bundles, deletes obsolete table and log files while it holds
 * the database's mutex (later LevelDB releases it first). Every read takes that mutex on the calling
 * thread (classic-level's implicit snapshot), so the service's main thread waited out each unlink:
 * freeing a file's blocks costs milliseconds on a disk mounted with `discard`.
 *
 * This keeps a second name (a hard link) for each of those files. LevelDB's unlink then only drops a name;
 * the blocks are freed when a later sweep, on libuv's pool and outside LevelDB's lock, unlinks the second
 * name of every file LevelDB no longer has. A crash leaves second names, which the sweeps after the next
 * open free. It is an optimisation: where it cannot work it logs why and stays out of the way.
 */
export class SecondNames {
  /** Files whose second name this instance made, or found to be theirs. */
  private readonly named = new Set<string>();
  private readonly linksDir: string;
  private sweeper: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private complained = false;

  private constructor(private readonly dir: string) {
    this.linksDir = secondNamesDir(dir);
  }

  /** Starts keeping second names for the LevelDB files in `dir`; undefined (and a log line) where it cannot. */
  static async keep(dir: string, sweepMs = SWEEP_MS): Promise<SecondNames | undefined> {
    const names = new SecondNames(dir);
    try {
      await mkdir(names.linksDir, { recursive: true });
      await names.reconcile();
    } catch (error) {
      console.error(`LevelDB ${dir}: no second names for its files, it deletes them under its lock:`, String(error));
      return undefined;
    }
    names.sweeper = setInterval(() => void names.sweep(), sweepMs).unref();
    return names;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.sweeper);
  }

  /** Frees the files LevelDB deleted and names the new ones; a sweep still running is not repeated. */
  sweep(): Promise<void> {
    this.running ??= this.reconcile()
      .catch((error) => this.complainOnce(error))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async reconcile(): Promise<void> {
    const links = await leveldbFiles(this.linksDir);
    const files = await leveldbFiles(this.dir);
    for (const name of links) if (!files.has(name) && !this.stopped) await this.free(name);
    for (const name of files) if (!this.named.has(name) && !this.stopped) await this.name(name, links.has(name));
  }

  private async free(file: string): Promise<void> {
    this.named.delete(file);
    await unlink(join(this.linksDir, file)).catch(unlessMissing);
  }

  /**
   * Gives a file its second name. A name already there may be another file's: LevelDB numbers a database
   * made again in the same place from the start, and after a crash it deletes the tables of an unfinished
   * compaction at open and hands their numbers out again.
   */
  private async name(file: string, linked: boolean): Promise<void> {
    const path = join(this.dir, file);
    const second = join(this.linksDir, file);
    if (linked) {
      const [a, b] = await Promise.all([stat(path).catch(unlessMissing), stat(second).catch(unlessMissing)]);
      if (a && b && a.ino === b.ino) return void this.named.add(file);
      await unlink(second).catch(unlessMissing);
    }
    try {
      await link(path, second);
      this.named.add(file);
    } catch (error) {
      // Missing: deleted before it was named (deleted the old way). Existing: named meanwhile, looked at next sweep.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') unlessMissing(error);
    }
  }

  private complainOnce(error: unknown): void {
    if (this.complained) return;
    this.complained = true;
    console.error(`LevelDB ${this.dir}: a sweep of second names failed (it is tried again, this is logged once):`, String(error));
  }
}

function unlessMissing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

async function leveldbFiles(dir: string): Promise<Set<string>> {
  return new Set((await readdir(dir)).filter((name) => DELETED_BY_LEVELDB.test(name)));
}
