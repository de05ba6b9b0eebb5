// The `config` object of a geth genesis.json: every fork geth knows, by block (Homestead to the merge
// netsplit) or by time (Shanghai on), the merge's terminal total difficulty, the blob schedule with its
// BPO entries and the deposit contract. Checked here so that an impossible schedule is refused with a
// message naming the field, before @ethereumjs's Common (which would throw an unlabelled error or
// silently reorder) sees it. Fields geth does not know are ignored, as geth ignores them.

/** geth's block-numbered forks, in the order they must activate (params.ChainConfig.CheckConfigForkOrder). */
export const BLOCK_FORKS = [
  'homesteadBlock',
  'daoForkBlock',
  'eip150Block',
  'eip155Block',
  'eip158Block',
  'byzantiumBlock',
  'constantinopleBlock',
  'petersburgBlock',
  'istanbulBlock',
  'muirGlacierBlock',
  'berlinBlock',
  'londonBlock',
  'arrowGlacierBlock',
  'grayGlacierBlock',
  'mergeNetsplitBlock',
] as const

/** geth's timestamped forks, in order; each BPO fork exists only through its blobSchedule entry. */
export const TIME_FORKS = ['shanghaiTime', 'cancunTime', 'pragueTime', 'osakaTime', 'bpo1Time', 'bpo2Time', 'bpo3Time', 'bpo4Time', 'bpo5Time'] as const

/** Forks a blobSchedule entry may name (@ethereumjs 10.1.3 knows these, and geth's schedule has the same keys). */
const BLOB_FORKS = ['cancun', 'prague', 'osaka', 'bpo1', 'bpo2', 'bpo3', 'bpo4', 'bpo5'] as const

// forks that are skipped over (geth: "optional"), so that a later one may be set without them
const OPTIONAL_FORKS = new Set<string>(['daoForkBlock', 'muirGlacierBlock', 'arrowGlacierBlock', 'grayGlacierBlock', 'mergeNetsplitBlock'])

const isActivation = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/** A non-negative integer given as a JSON number or a hex or decimal string (geth's *big.Int fields). */
function isBigValue(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 && Number.isInteger(v)
  return typeof v === 'string' && /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(v)
}

/** Throws `fail(message)` for the first impossible value of a genesis config. */
export function checkGenesisConfig(config: Record<string, unknown>, fail: (what: string) => never): void {
  if (typeof config.chainId !== 'number' || !Number.isSafeInteger(config.chainId) || config.chainId <= 0) fail('config.chainId must be a positive integer')
  for (const field of [...BLOCK_FORKS, ...TIME_FORKS]) {
    const v = config[field]
    if (v !== undefined && v !== null && !isActivation(v)) fail(`config.${field} must be a non-negative integer`)
  }
  // Spurious Dragon is one fork in @ethereumjs (and in every network geth ships): EIP-155 and EIP-158 together
  if ((config.eip155Block ?? null) !== (config.eip158Block ?? null)) fail('config.eip155Block and config.eip158Block must be equal (both are Spurious Dragon)')
  checkOrder(config, BLOCK_FORKS, fail)
  checkOrder(config, TIME_FORKS, fail)
  const ttd = config.terminalTotalDifficulty
  if (ttd !== undefined && ttd !== null && !isBigValue(ttd)) fail('config.terminalTotalDifficulty must be a non-negative integer')
  if (config.terminalTotalDifficultyPassed !== undefined && typeof config.terminalTotalDifficultyPassed !== 'boolean') {
    fail('config.terminalTotalDifficultyPassed must be true or false')
  }
  // @ethereumjs places the merge by block number (mergeNetsplitBlock), not by total difficulty: a chain
  // that reached a non-zero TTD must say at which block (geth's own configs for such chains do)
  if (ttd !== undefined && ttd !== null && BigInt(ttd as string | number) > 0n && !isActivation(config.mergeNetsplitBlock)) {
    fail(`config.terminalTotalDifficulty ${String(ttd)} needs config.mergeNetsplitBlock, the first block after the merge: Keel places the merge by block number`)
  }
  const firstTimed = TIME_FORKS.find((f) => isActivation(config[f]))
  if (firstTimed !== undefined && !isActivation(config.londonBlock)) fail(`config.${firstTimed} needs londonBlock: the timestamped forks come after London`)
  const deposit = config.depositContractAddress
  if (deposit !== undefined && deposit !== null && (typeof deposit !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(deposit))) {
    fail('config.depositContractAddress must be a 0x-prefixed 20-byte address')
  }
  checkBlobSchedule(config, fail)
}

function checkOrder(config: Record<string, unknown>, forks: readonly string[], fail: (what: string) => never): void {
  let last: { field: string; at: number } | undefined
  let gap: string | undefined
  for (const field of forks) {
    const at = config[field]
    if (!isActivation(at)) {
      if (!OPTIONAL_FORKS.has(field) && gap === undefined) gap = field
      continue
    }
    if (gap !== undefined) fail(`config.${field} is set but config.${gap} is not: forks activate in order`)
    if (last !== undefined && at < last.at) fail(`config.${field} (${at}) is before config.${last.field} (${last.at}): forks activate in order`)
    last = { field, at }
  }
}

function checkBlobSchedule(config: Record<string, unknown>, fail: (what: string) => never): void {
  const schedule = config.blobSchedule
  if (schedule === undefined || schedule === null) {
    for (const n of [1, 2, 3, 4, 5]) if (isActivation(config[`bpo${n}Time`])) fail(`config.bpo${n}Time needs its entry in config.blobSchedule`)
    return
  }
  if (typeof schedule !== 'object' || Array.isArray(schedule)) fail('config.blobSchedule must be an object')
  for (const [fork, entry] of Object.entries(schedule as Record<string, unknown>)) {
    if (!(BLOB_FORKS as readonly string[]).includes(fork)) fail(`config.blobSchedule.${fork}: not a fork with blobs (${BLOB_FORKS.join(', ')})`)
    if (typeof entry !== 'object' || entry === null) fail(`config.blobSchedule.${fork} must be an object`)
    const e = entry as Record<string, unknown>
    for (const key of ['target', 'max', 'baseFeeUpdateFraction']) {
      if (!isActivation(e[key]) || (key !== 'target' && e[key] === 0)) fail(`config.blobSchedule.${fork}.${key} must be a positive integer`)
    }
    if ((e.target as number) > (e.max as number)) fail(`config.blobSchedule.${fork}: target ${e.target} is above max ${e.max}`)
  }
  for (const n of [1, 2, 3, 4, 5]) {
    if (isActivation(config[`bpo${n}Time`]) && (schedule as Record<string, unknown>)[`bpo${n}`] === undefined) fail(`config.bpo${n}Time needs its entry in config.blobSchedule`)
  }
}
