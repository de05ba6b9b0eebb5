// What a producer started with --stream-url runs besides its chain: the block publisher (the sink of
// every block's write set) and the snapshot service for replicas that need a copy of the chain.

import type { StreamStatus } from '../chain/messages.js'
import type { ChainLevel } from '../chain/store/level.js'
import type { KeelConfig } from '../config/types.js'
import { createLogger } from '../logging/logger.js'
import { BlockPublisher } from './publisher.js'
import { SnapshotService } from './snapshot-service.js'

export interface ProducerStream {
  publisher: BlockPublisher
  close(): Promise<void>
}

export function openProducerStream(config: KeelConfig, level: ChainLevel, onStatus: (status: StreamStatus) => void): ProducerStream {
  const logger = createLogger(config.logLevel).child({ component: 'stream' })
  const url = config.streamUrl!
  const publisher = new BlockPublisher({ url, chainId: config.chainId, level, logger, maxAgeSeconds: config.streamMaxAgeSeconds, onStatus })
  const snapshots = new SnapshotService({ url, chainId: config.chainId, level, logger })
  return {
    publisher,
    close: async () => {
      await Promise.all([publisher.close(), snapshots.close()])
    },
  }
}
