import { link, mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** LevelDB's table and log files: the ones it deletes after compactions and memtable flushes. */
const DELETED_BY_LEVELDB = /^\d+\.(ldb|sst|log)$/;

/** How often new files are named and deleted ones freed; a file made and deleted between two is deleted the old way. */
const SWEEP_MS = 250;

/** What `link` fails with where the filesystem keeps no second names. */
const NO_HARD_LINKS = new Set(['EPERM', 'EXDEV', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Where a database's second names are: inside its folder, which LevelDB skips (removing the folder removes
 * them; LevelDB's own DestroyDB would leave it).
 */
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
      await names.sweep();
    } catch (error) {
      console.error(`LevelDB ${dir}: no second names for its files, it deletes them under its lock:`, String(error));
      return undefined;
    }
    names.sweeper = setInterval(() => void names.sweep().catch((error) => names.complainOnce(error)), sweepMs).unref();
    return names;
  }

  /** Stops sweeping; resolves once a sweep still running has ended (the database closes after it). */
  close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    return (this.running ?? Promise.resolve()).catch(() => undefined); // a failing sweep does not keep the database open
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Frees the files LevelDB deleted and names the new ones; a sweep still running is not repeated. Fails
   * only where the filesystem keeps no hard links; what goes wrong with one file is logged once and that
   * file is tried again next sweep.
   */
  sweep(): Promise<void> {
    this.running ??= this.reconcile().finally(() => (this.running = undefined));
    return this.running;
  }

  private async reconcile(): Promise<void> {
    const links = await this.filesIn(this.linksDir);
    const files = links && (await this.filesIn(this.dir));
    if (!links || !files) return; // logged; a sweep that cannot see both folders changes nothing
    for (const name of links) if (!files.has(name) && !this.stopped) await this.free(name);
    for (const name of files) if (!this.named.has(name) && !this.stopped) await this.name(name, links.has(name));
  }

  private async free(file: string): Promise<void> {
    this.named.delete(file);
    await unlink(join(this.linksDir, file)).catch((error) => this.unlessMissing(error));
  }

  /**
   * Gives a file its second name. A name already there may be another file's: LevelDB numbers a database
   * made again in the same place from the start, and at open it deletes the tables of a compaction that did
   * not finish (a crash, or a close during it) and hands their numbers out again.
   */
  private async name(file: string, linked: boolean): Promise<void> {
    const path = join(this.dir, file);
    const second = join(this.linksDir, file);
    if (linked) {
      const [a, b] = await Promise.all([stat(path).catch(() => undefined), stat(second).catch(() => undefined)]);
      if (a && b && a.ino === b.ino) return void this.named.add(file);
      await unlink(second).catch((error) => this.unlessMissing(error));
    }
    try {
      await link(path, second);
      this.named.add(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (NO_HARD_LINKS.has(code)) throw error;
      // Missing: deleted before it was named (deleted the old way). Existing: named meanwhile, looked at next sweep.
      if (code !== 'EEXIST') this.unlessMissing(error);
    }
  }

  private async filesIn(dir: string): Promise<Set<string> | undefined> {
    try {
      return new Set((await readdir(dir)).filter((name) => DELETED_BY_LEVELDB.test(name)));
    } catch (error) {
      this.complainOnce(error);
      return undefined;
    }
  }

  private unlessMissing(error: unknown): void {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.complainOnce(error);
  }

  private complainOnce(error: unknown): void {
    if (this.complained || this.stopped) return;
    this.complained = true;
    console.error(`LevelDB ${this.dir}: second names: ${String(error)} (tried again every sweep; logged once)`);
  }
}
