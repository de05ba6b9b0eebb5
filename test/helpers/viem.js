// viem clients for a Keel node under test: the chain definition and HTTP clients polling every 250 ms.

import { createPublicClient, createWalletClient, defineChain, http } from 'viem'
import { CHAIN_ID } from './node.js'

export function keelChain(url) {
  return defineChain({
    id: CHAIN_ID,
    name: 'Keel',
    nativeCurrency: { name: 'Keel', symbol: 'KEEL', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  })
}

/** A public client and a wallet client signing with `account`, over HTTP. */
export function httpClients(url, account) {
  const chain = keelChain(url)
  return {
    publicClient: createPublicClient({ chain, transport: http(url), pollingInterval: 250 }),
    walletClient: createWalletClient({ account, chain, transport: http(url), pollingInterval: 250 }),
  }
}
