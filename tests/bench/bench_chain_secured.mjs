// Benchmark of the ChainSecured signature endpoints through the whole stack (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_chain_secured.mjs [--workers 2] [--n 200] [--conversions 30]
// Starts a stack (tests/api/stack.mjs), creates a ChainSecured account from an ethers wallet, signs every
// envelope with ethers beforehand (signing is the client's cost, not timed), then measures sequential
// p50/p99 of: create_wallet_with_signature, add_usage_api_key_with_signature, a request refused at the
// signature (verification without keyd), and convert_to_chain_secured_account (each on a fresh
// API-mode account; includes the payer's transaction to receipt). The verification alone is
// bench_typed_data_auth (C++).
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, ethers, accountConfigAbi } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';

const WORKERS = arg('workers', 2);
const N = arg('n', 200);
const CONVERSIONS = arg('conversions', 30);


const stack = await startStack({ workers: WORKERS });
const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50 });
try {
  const chainId = Number(stack.chainId);
  const admin = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
  await (await new ethers.Contract(stack.contract, accountConfigAbi(), admin).newChainSecuredAccount()).wait();

  const envelope = async (signer, primaryType, address = signer.address) => {
    const domain = { name: 'Sigil ChainSecured', version: '1', chainId };
    const types = { [primaryType]: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }] };
    const message = { address, issuedAt: Math.floor(Date.now() / 1000) };
    const signature = await signer.signTypedData(domain, types, message);
    return {
      typed_data: { types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }], ...types }, primaryType, domain, message },
      signature,
    };
  };
  const timed = async (bodies, path, expect, key) => {
    const out = [];
    for (const body of bodies) {
      const t0 = performance.now();
      const r = await stack.request('POST', path, key ? { key: key(body), body: body.body ?? body } : { body });
      out.push(performance.now() - t0);
      if (r.status !== expect) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    return out;
  };
  const many = async (n, f) => { const out = []; for (let i = 0; i < n; i++) out.push(await f(i)); return out; };

  // Warm every worker's connections (keyd, chain) first.
  await timed(await many(20, () => envelope(admin, 'CreateWallet')), 'create_wallet_with_signature', 200);

  const create = await timed(await many(N, () => envelope(admin, 'CreateWallet')), 'create_wallet_with_signature', 200);
  const addKey = await timed(await many(N, () => envelope(admin, 'AddUsageApiKey')), 'add_usage_api_key_with_signature', 200);
  const mallory = ethers.Wallet.createRandom();
  const refused = await timed(await many(N, () => envelope(mallory, 'CreateWallet', admin.address)),
    'create_wallet_with_signature', 401);
  const conversions = await many(CONVERSIONS, async () => {
    const { api_key } = await newAccount(stack, 'bench conversion');
    const next = ethers.Wallet.createRandom();
    return { master: api_key, body: { new_admin_wallet_address: next.address, ...(await envelope(next, 'ConvertAccount')) } };
  });
  const convert = await timed(conversions, 'convert_to_chain_secured_account', 200, (b) => b.master);

  const fmt = (x) => x.toFixed(2).padStart(8);
  const row = (name, s) => console.log(`${name.padEnd(46)} ${String(s.n).padStart(5)} ${fmt(s.p50)} ${fmt(s.p99)} ${fmt(s.max)}`);
  console.log(`Sigil ChainSecured endpoints through nginx (HTTPS, keep-alive), ${WORKERS} workers, sequential`);
  console.log(`${'request'.padEnd(46)} ${'n'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}`);
  row('POST create_wallet_with_signature', summary(create));
  row('POST add_usage_api_key_with_signature', summary(addKey));
  row('POST create_wallet_with_signature (refused 401)', summary(refused));
  row('POST convert_to_chain_secured_account', summary(convert));
} finally {
  provider.destroy();
  await stack.stop();
}
