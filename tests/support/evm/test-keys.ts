import { keccak256, stringToBytes, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

export interface TestWallet {
  label: string;
  key: Hex;
  address: Address;
  account: PrivateKeyAccount;
}

/** A wallet whose key is derived from its label, so every run has the same addresses and signatures. */
export function testWallet(label: string): TestWallet {
  const key = keccak256(stringToBytes(`pact test wallet: ${label}`));
  const account = privateKeyToAccount(key);
  return { label, key, address: account.address, account };
}
