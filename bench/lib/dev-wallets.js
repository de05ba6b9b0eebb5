// The accounts `keel start --dev` (and anvil) fund: m/44'/60'/0'/0/i of the standard test mnemonic.

import { HDNodeWallet, Mnemonic } from 'ethers'

const MNEMONIC = 'test test test test test test test test test test test junk'

export function devWallet(i) {
  return HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(MNEMONIC), `m/44'/60'/0'/0/${i}`)
}
