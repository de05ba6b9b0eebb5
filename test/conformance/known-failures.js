// The execution-apis fixtures Keel does not pass yet, each with its reason (rpc-compat.test.js fails when
// one of them starts passing, or when a fixture not listed here fails).

const noBlobPool = 'the pool takes no blob transactions (type 3): a private chain without a consensus layer has no blob data availability (README: blob transactions)'
const notServed = 'testing_buildBlockV1 (a block built on request, for tests) is not served: Keel answers -32601'

export const KNOWN = {
  // the pool takes no blob transactions (README: blob transactions); blocks with them import and are served
  'eth_sendRawTransaction/send-blob-tx': noBlobPool,
  'eth_simulateV1/ethSimulate-blobs': 'eth_simulateV1 refuses blob transactions, as the pool does (README: blob transactions)',
  'testing_buildBlockV1/build-block-empty-transactions': notServed,
  'testing_buildBlockV1/build-block-from-mempool': notServed,
  'testing_buildBlockV1/build-block-invalid-transaction': notServed,
  'testing_buildBlockV1/build-block-with-transactions': notServed,
}
