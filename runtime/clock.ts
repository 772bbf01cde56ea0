import { readFileSync, writeFileSync } from 'node:fs';

/** The one source of time. Test hooks move it; it never goes backwards. */
export interface Clock {
  now(): number;
}

/** Wall time plus an offset that only test hooks change; the offset is kept in a file so a restart keeps it. */
export class ManualOffsetClock implements Clock {
  private offsetMs: number;

  constructor(private readonly offsetFile?: string) {
    this.offsetMs = offsetFile ? readOffset(offsetFile) : 0;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): number {
    return this.setOffset(this.offsetMs + ms);
  }

  /** Moves time to `at`; a time in the past is refused so deadlines already passed stay passed. */
  set(at: number): number {
    return this.setOffset(Math.max(this.offsetMs, at - Date.now()));
  }

  private setOffset(offsetMs: number): number {
    this.offsetMs = offsetMs;
    if (this.offsetFile) writeFileSync(this.offsetFile, String(offsetMs));
    return this.now();
  }
}

function readOffset(file: string): number {
  try {
    const value = Number(readFileSync(file, 'utf8'));
    return Number.isFinite(value) ? value : 0;
  } catch {
    return 0;
  }
}
