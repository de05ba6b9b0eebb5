// The call pool: eth_call, eth_estimateGas and eth_createAccessList run in piscina worker threads so the
// event loop never waits on the EVM.

import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import type { GethGenesis } from '../evm/common.js'
import { limitExceeded } from '../rpc/errors.js'
import type { ExecLimits, ExecResult, ExecTask } from './types.js'

export interface ExecPoolInit {
  dataDir: string
  genesis: GethGenesis
  limits: ExecLimits
}

export interface Executor {
  run(task: ExecTask): Promise<ExecResult>
  close(): Promise<void>
}

export class ExecPool implements Executor {
  private readonly piscina: Piscina<ExecTask[], ExecResult[]>

  constructor(init: ExecPoolInit, workers: number, maxQueue = 1024) {
    const threads = workers > 0 ? workers : Math.max(1, availableParallelism() - 1)
    this.piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      maxQueue,
      idleTimeout: 60_000,
      workerData: init,
    })
  }

  async run(task: ExecTask): Promise<ExecResult> {
    const [result] = await this.runBatch([task])
    return result
  }

  async runBatch(tasks: ExecTask[]): Promise<ExecResult[]> {
    try {
      return await this.piscina.run(tasks)
    } catch (err) {
      if ((err as Error).message?.includes('Task queue is at limit')) throw limitExceeded('call pool queue is full, retry later')
      throw err
    }
  }

  async close(): Promise<void> {
    await this.piscina.close({ force: true })
  }
}
