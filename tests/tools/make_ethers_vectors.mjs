// Produces tests/data/ethers_wallet_vectors.json with the real ethers (npm, node_modules) so the
// sandbox's ethers (ethers v5 with native fast paths, workers/sandbox/build/ethers_lower.mjs and
// workers/sandbox/natives/crypto.cpp; signatures and hashes are the same in v5 and v6) can be checked
// byte for byte. Run from the repository root:
//   node tests/tools/make_ethers_vectors.mjs > tests/data/ethers_wallet_vectors.json
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const ethers = require("../../node_modules/ethers");
const COMMAND = "node tests/tools/make_ethers_vectors.mjs > tests/data/ethers_wallet_vectors.json";

const PRIVATE_KEYS = [
  "0x0000000000000000000000000000000000000000000000000000000000000001",
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",  // anvil account 0
  "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
  "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140",  // n - 1
];

const MESSAGES = ["Chipotle Rocks!", "", "héllo wörld 😀 日本", "0x1234", "line1\nline2\ttab"];
const MESSAGE_BYTES = ["0x", "0x00ff10", "0x" + "ab".repeat(100)];

const TYPED = {
  domain: {
    name: "Ether Mail",
    version: "1",
    chainId: 1,
    verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC",
  },
  types: {
    Person: [
      { name: "name", type: "string" },
      { name: "wallet", type: "address" },
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person" },
      { name: "contents", type: "string" },
      { name: "amount", type: "uint256" },
      { name: "tags", type: "bytes32[]" },
    ],
  },
  value: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob! 😀",
    amount: "123456789012345678901234567890",
    tags: ["0x" + "11".repeat(32), "0x" + "22".repeat(32)],
  },
};

const TRANSACTIONS = [
  { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", nonce: 0, gasLimit: 21000,
    maxFeePerGas: "30000000000", maxPriorityFeePerGas: "1000000000", value: "1000000000000000000",
    chainId: 1 },
  { to: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", nonce: 7, gasLimit: "0x5208",
    maxFeePerGas: "0x6fc23ac00", maxPriorityFeePerGas: 0, value: 0, data: "0xdeadbeef",
    chainId: 31337, type: 2 },
  { nonce: 1, gasLimit: 100000, maxFeePerGas: 2, maxPriorityFeePerGas: 1, data: "0x6000", chainId: 8453 },
  { to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", nonce: 3, gasLimit: 21000, gasPrice: "20000000000",
    value: "12345", chainId: 137, type: 0 },
  { to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", nonce: 4, gasLimit: 50000, gasPrice: 1000000000,
    value: 1, data: "0x01", chainId: 1 },
  { to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", nonce: 5, gasLimit: 21000, gasPrice: 1, value: 2 },
  { to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", nonce: 6, gasLimit: 21000, gasPrice: 1, type: 0 },
  { nonce: 2, gasLimit: 21000, gasPrice: "0x01", chainId: 10, type: 1 },
];

async function walletVector(privateKey) {
  const wallet = new ethers.Wallet(privateKey);
  const messages = [];
  for (const m of MESSAGES) messages.push({ message: m, signature: await wallet.signMessage(m) });
  for (const h of MESSAGE_BYTES) {
    messages.push({ bytes: h, signature: await wallet.signMessage(ethers.getBytes(h)) });
  }
  const transactions = [];
  for (const tx of TRANSACTIONS) transactions.push({ tx, signed: await wallet.signTransaction(tx) });
  return {
    privateKey,
    address: wallet.address,
    publicKey: wallet.signingKey.publicKey,
    compressedPublicKey: wallet.signingKey.compressedPublicKey,
    messages,
    typedDataSignature: await wallet.signTypedData(TYPED.domain, TYPED.types, TYPED.value),
    digestSignature: wallet.signingKey.sign(ethers.id("digest")).serialized,
    transactions,
  };
}

const wallets = [];
for (const pk of PRIVATE_KEYS) wallets.push(await walletVector(pk));

const bytesInputs = ["0x", "0x00", "0x616263", "0x" + "ff".repeat(200)];
const texts = ["", "hello", "Transfer(address,address,uint256)", "日本語 😀"];
const addresses = [
  "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
  "0xFB6916095CA1DF60BB79CE92CE3EA74C37C5D359",
  "dbf03b407c01e7cd3cbea99509d93f8dddc8c6fb",
  "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
];

const out = {
  source: `ethers ${ethers.version} (npm, /work/main/node_modules) via: ${COMMAND}`,
  wallets,
  typedData: { ...TYPED, hash: ethers.TypedDataEncoder.hash(TYPED.domain, TYPED.types, TYPED.value),
               encodedType: ethers.TypedDataEncoder.from(TYPED.types).encodeType("Mail") },
  keccak256: bytesInputs.map((data) => ({ data, hash: ethers.keccak256(data) })),
  sha256: bytesInputs.map((data) => ({ data, hash: ethers.sha256(data) })),
  id: texts.map((text) => ({ text, hash: ethers.id(text) })),
  hashMessage: MESSAGES.map((message) => ({ message, hash: ethers.hashMessage(message) })),
  getAddress: addresses.map((input) => ({ input, address: ethers.getAddress(input) })),
};
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
