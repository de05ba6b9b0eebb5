// The deterministic CREATE2 deployer (Nick Johnson's "deterministic-deployment-proxy"): a contract at the
// same address on every chain that deploys the init code it is sent with CREATE2, the first 32 bytes of
// the calldata being the salt. Foundry's `forge script` deploys `new C{salt: s}()` through it and stops
// with "missing CREATE2 deployer" where it has no code; anvil's genesis holds it, and so do Keel's.
// Nothing here loads @ethereumjs: the default genesis is written before the EVM modules load.

import type { SystemContract } from './system-contracts.js'

export const CREATE2_DEPLOYER: SystemContract = {
  address: '0x4e59b44847b379578588920ca78fbf26c0b4956c',
  code: '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3',
}

