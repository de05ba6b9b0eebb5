// The execution-apis fixtures Keel does not pass yet, each with its reason (rpc-compat.test.js fails when
// one of them starts passing, or when a fixture not listed here fails).

const notServed = 'testing_buildBlockV1 (a block built on request, for tests) is not served: Keel answers -32601'

export const KNOWN = {
  'eth_sendRawTransaction/send-blob-tx': 'TODO',
  'eth_simulateV1/ethSimulate-blobs': 'TODO',
  'eth_simulateV1/ethSimulate-empty-with-block-num-set-firstblock': 'TODO',
  'eth_simulateV1/ethSimulate-move-two-accounts-to-same-38023': 'TODO',
  'eth_simulateV1/ethSimulate-overflow-nonce': 'TODO',
  'testing_buildBlockV1/build-block-empty-transactions': notServed,
  'testing_buildBlockV1/build-block-from-mempool': notServed,
  'testing_buildBlockV1/build-block-invalid-transaction': notServed,
  'testing_buildBlockV1/build-block-with-transactions': notServed,
}
