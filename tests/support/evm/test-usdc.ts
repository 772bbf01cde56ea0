import { getAddress, type Account, type Address, type Chain, type PublicClient, type Transport, type WalletClient } from 'viem';
import { testUsdcAbi, testUsdcBytecode } from '../../../contracts/test-usdc-artifact.js';

/** What a payer signs over (the EIP-712 domain) and what a requirement names (the asset). */
export interface TestToken {
  address: Address;
  name: string;
  version: string;
  symbol: string;
  decimals: number;
}

// The EIP-712 name and version of Base Sepolia USDC (x402's DEFAULT_ASSETS), so requirements look like real ones.
const USDC_LIKE = { name: 'USDC', version: '2', symbol: 'USDC', decimals: 6 } as const;

type Deployer = WalletClient<Transport, Chain, Account>;

export async function deployTestUsdc(deployer: Deployer, reader: PublicClient): Promise<TestToken> {
  const hash = await deployer.deployContract({
    abi: testUsdcAbi,
    bytecode: testUsdcBytecode,
    args: [USDC_LIKE.name, USDC_LIKE.symbol, USDC_LIKE.version],
  });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`TestUSDC deployment failed: ${hash}`);
  return { address: getAddress(receipt.contractAddress), ...USDC_LIKE };
}

/** Mints from the deployer (the token's only minter) and waits until it is mined. */
export async function mintTestUsdc(
  minter: Deployer,
  reader: PublicClient,
  token: Address,
  to: Address,
  amount: bigint,
): Promise<void> {
  const hash = await minter.writeContract({ address: token, abi: testUsdcAbi, functionName: 'mint', args: [to, amount] });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`TestUSDC mint to ${to} failed: ${hash}`);
}
