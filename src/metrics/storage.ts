// Storage metrics: whether the chain database can be written, and the on-disk size of the chain database, summed over its files at scrape time (LevelDB
// keeps a few hundred table files in one folder, so this is a short readdir plus stats). The write batch
// time of each block is recorded with the chain metrics (keel_storage_write_batch_seconds).

import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Counter, Gauge } from 'prom-client'
import type { StorageStatus } from '../chain/messages.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

export class StorageMetrics {
  readonly dbSize: CollectableGauge
  readonly dbMemory: CollectableGauge
  readonly writable: Gauge
  readonly writeStops: Counter
  private lastFailures = 0

  constructor(register: MetricsRegistry) {
    this.dbSize = register.gauge({
      name: 'keel_storage_db_size_bytes',
      help: 'Size on disk of the LevelDB chain database (sum of its files, read at scrape time)',
    })
    this.dbMemory = register.gauge({
      name: 'keel_storage_db_memory_bytes',
      help: "LevelDB's estimate of the memory the chain database holds (its memtables and block cache), shared by every thread",
    })
    this.writable = register.gauge({
      name: 'keel_storage_writable',
      help: '1 while the chain database can be written; 0 while a full disk (--min-free-disk) or a failed write stops sealing and submissions',
    })
    this.writable.set(1)
    this.writeStops = register.counter({
      name: 'keel_storage_write_stops_total',
      help: 'Times the chain database stopped being writable (a full disk or a failed write)',
    })
  }

  /** The producer's report (store/write-guard.ts). */
  storageStatus(status: StorageStatus): void {
    const stopsBefore = this.lastFailures
    this.lastFailures = status.failures
    if (status.failures > stopsBefore) this.writeStops.inc(status.failures - stopsBefore)
    this.writable.set(status.writable ? 1 : 0)
  }

  bindDatabaseMemory(read: () => number): void {
    this.dbMemory.addCollect((g) => g.set(read()))
  }

  bindDatabaseFolder(folder: string): void {
    this.dbSize.addCollect(async (g) => g.set(await folderSize(folder)))
  }
}

/** Total size of the files in `folder` and its subfolders; files that vanish meanwhile (compaction) count 0. */
export async function folderSize(folder: string): Promise<number> {
  const entries = await readdir(folder, { withFileTypes: true })
  const sizes = await Promise.all(
    entries.map(async (entry) => {
      const path = join(folder, entry.name)
      try {
        if (entry.isDirectory()) return await folderSize(path)
        if (entry.isFile()) return (await stat(path)).size
      } catch {
        // removed by a compaction between readdir and stat
      }
      return 0
    }),
  )
  let total = 0
  for (const size of sizes) total += size
  return total
}
