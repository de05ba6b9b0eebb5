// Whether the chain database can be written, on the producer thread. Two things stop writes:
//  - free space on the data folder's file system below --min-free-disk (checked before a write, like
//    geth's --datadir.minfreedisk), so that LevelDB itself rarely meets a full disk: once one of its
//    background writes (a memtable flush, a compaction) fails, LevelDB refuses every write until the
//    database is opened again, and every thread of the process shares that one handle;
//  - a LevelDB write that failed (ENOSPC anyway, EIO, ...).
// While writes are stopped the producer seals nothing and refuses submissions before they reach the pool;
// reads never depend on it. A retry with backoff probes the disk and LevelDB and resumes by itself.

import { statfsSync } from 'node:fs'
import { storageUnavailable } from '../../errors.js'
import type { StorageStatus } from '../messages.js'

/** A LevelDB batch of the producer failed: the node degrades (stops writing) instead of exiting. */
export class StorageWriteError extends Error {
  /** `cause` undefined: nothing was written because the guard had already stopped writes */
  constructor(cause?: unknown) {
    super(cause === undefined ? 'database writes are stopped' : `database write failed: ${(cause as Error)?.message ?? String(cause)}`, { cause })
    this.name = 'StorageWriteError'
  }
}

// Backoff of the retry: 1 s doubling to 30 s, so that an operator freeing space sees sealing resume
// within half a minute, while a database that keeps failing costs one probe every 30 s.
const RETRY_FIRST_MS = 1_000
const RETRY_MAX_MS = 30_000
// A free-space answer is reused this long: a submission costs no statfs under load, and a block or a
// journal batch written within it stays far below the margin --min-free-disk keeps.
const FREE_SPACE_TTL_MS = 200
const MiB = 1024 * 1024
// Writes resume only once the free space is this much above --min-free-disk (a quarter of it, at least
// 16 MiB): a compaction that frees a little space while the disk is full must not resume sealing for a
// block or two, then stop again.
const resumeMargin = (minFree: number): number => Math.max(16 * MiB, Math.floor(minFree / 4))

export interface WriteGuardHooks {
  /** A write through the same path blocks take (a LevelDB batch); rejects while LevelDB refuses writes. */
  probe(): Promise<void>
  /** The status changed (stopped, reason changed, resumed). */
  onChange(status: StorageStatus): void
  /** Writes are possible again: seal what waits. */
  onResume(): void
}

export type FreeBytes = (dir: string) => number

export const statfsFreeBytes: FreeBytes = (dir) => {
  const s = statfsSync(dir)
  return s.bavail * s.bsize
}

export class WriteGuard {
  private stopped: { reason: string; since: number; writeFailed: boolean; restart: boolean } | undefined
  private failures = 0
  private retryDelay = RETRY_FIRST_MS
  private timer: NodeJS.Timeout | undefined
  private freeCheckedAt = 0
  private closed = false

  constructor(
    private readonly dir: string,
    private readonly minFreeBytes: number,
    private readonly hooks: WriteGuardHooks,
    private readonly freeBytes: FreeBytes = statfsFreeBytes,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes may go ahead now. Checks free space (at most every FREE_SPACE_TTL_MS). */
  get writable(): boolean {
    if (this.stopped !== undefined) return false
    const now = this.now()
    if (this.minFreeBytes > 0 && now - this.freeCheckedAt >= FREE_SPACE_TTL_MS) {
      this.freeCheckedAt = now
      const short = this.spaceShortage()
      if (short !== undefined) this.stop(short, false)
    }
    return this.stopped === undefined
  }

  status(): StorageStatus {
    const s = this.stopped
    return s === undefined ? { writable: true, failures: this.failures } : { writable: false, reason: s.reason, since: s.since, failures: this.failures }
  }

  /** Throws the error eth_sendRawTransaction answers while writes are stopped. */
  assertWritable(): void {
    if (!this.writable) throw storageUnavailable(this.stopped!.reason)
  }

  /** A LevelDB write failed: stop writing and start retrying. */
  writeFailed(err: unknown): void {
    if (err instanceof StorageWriteError && err.cause === undefined) return
    const cause = err instanceof StorageWriteError ? (err.cause as Error) : (err as Error)
    this.stop(`a database write failed: ${cause?.message ?? String(cause)}`, true)
  }

  close(): void {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** `resuming`: the free space must also clear the resume margin. */
  private spaceShortage(resuming = false): string | undefined {
    let free: number
    try {
      free = this.freeBytes(this.dir)
    } catch (err) {
      return `cannot read the free space of ${this.dir}: ${(err as Error).message}`
    }
    if (free >= this.minFreeBytes + (resuming ? resumeMargin(this.minFreeBytes) : 0)) return undefined
    return `disk full: ${(free / MiB).toFixed(1)} MiB free on ${this.dir}, --min-free-disk keeps ${(this.minFreeBytes / MiB).toFixed(0)} MiB`
  }

  private stop(reason: string, writeFailed: boolean, restart = false): void {
    const first = this.stopped === undefined
    if (first) this.failures++
    // told once when writes stop and once if the cause changes kind (a full disk, a failed write, one
    // that needs a restart), never each retry (the free MiB in the reason changes every time)
    const changed = first || this.stopped!.writeFailed !== writeFailed || this.stopped!.restart !== restart
    this.stopped = { reason, since: first ? this.now() : this.stopped!.since, writeFailed, restart }
    if (changed) this.hooks.onChange(this.status())
    if (first) {
      this.retryDelay = RETRY_FIRST_MS
      this.schedule()
    }
  }

  private schedule(): void {
    if (this.closed) return
    this.timer = setTimeout(() => void this.retry(), this.retryDelay)
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS)
  }

  private async retry(): Promise<void> {
    this.timer = undefined
    if (this.closed || this.stopped === undefined) return
    const short = this.minFreeBytes > 0 ? this.spaceShortage(true) : undefined
    if (short !== undefined) {
      // a write error stays the reason shown until the disk has room again
      if (!this.stopped.writeFailed) this.stop(short, false)
      return this.schedule()
    }
    try {
      await this.hooks.probe()
    } catch (err) {
      // the disk has room and LevelDB still refuses: after a failed background write (a compaction) it
      // refuses every write until the database is opened again, which only a restart does here
      this.stop(`a database write failed: ${(err as Error)?.message ?? String(err)}; free space is back but LevelDB keeps refusing writes until the node restarts`, true, true)
      return this.schedule()
    }
    this.stopped = undefined
    this.freeCheckedAt = this.now()
    this.hooks.onChange(this.status())
    this.hooks.onResume()
  }
}
