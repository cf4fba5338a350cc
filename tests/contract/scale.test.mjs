// AccountConfig at scale (contract header "Scale"): page views stay within PAGE_WORD_BUDGET storage
// words per call and the pages still cover every item; canExecute does not grow with the account
// (the per-CID chains of groups) and agrees with a plain model of the groups under every kind of
// write; a full group (MAX_GROUP_ITEMS PKPs and CIDs) can still be renamed and removed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setupChain, perms, cid, randomUint, reverts, ethers } from './support.mjs';

// Gas bounds asserted here are deterministic (gas, not time): what one eth_call of a view may use on
// any node (EIP-7825's 2^24 per transaction is the lowest cap we know), and what the execution
// checks cost at most for the shapes below.
const CALL_GAS_CAP = 1n << 24n;
const LONG_NAME = 'n'.repeat(256);
const LONG_DESCRIPTION = 'd'.repeat(4096);

describe('AccountConfig at scale', () => {
  let chain;
  let iface;
  let address;
  let rpc;  // unbatched: these tests wait on thousands of calls one after another
  let view; // the contract through it
  before(async () => {
    chain = await setupChain();
    iface = chain.deployer.interface;
    address = await chain.deployer.getAddress();
    rpc = new ethers.JsonRpcProvider(chain.anvil.url, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
    view = chain.deployer.connect(rpc);
  });
  after(async () => {
    rpc?.destroy();
    await chain?.stop();
  });

  /// A managed account whose admin wallet writes directly (owner rights, callerKeyHash 0).
  async function account() {
    const acct = await chain.managedAccount();
    await rpc.send('anvil_setBalance', [acct.adminWallet.address, '0x' + (10n ** 22n).toString(16)]);
    return acct;
  }

  /// Sends the calls [fn, args] from `wallet` as one burst mined in one block: automine off, the block
  /// gas limit raised to the burst's total for that block, then both restored (anvil 1.7 drops, not
  /// delays, what does not fit a block mined by anvil_mine; and sending faster than automine mines has
  /// left it mining empty blocks forever). Asserts every receipt's success and returns the receipts.
  async function sendAll(wallet, calls) {
    const gasLimit = 16_000_000n;
    let nonce = await rpc.getTransactionCount(wallet.address, 'pending');
    const { chainId } = await rpc.getNetwork();
    const raws = [];
    for (const [fn, args] of calls) {
      raws.push(await wallet.signTransaction({
        to: address, data: iface.encodeFunctionData(fn, args), nonce: nonce++, chainId, type: 2,
        gasLimit, maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1n,
      }));
    }
    const blockGasLimit = (await rpc.send('eth_getBlockByNumber', ['latest', false])).gasLimit;
    const hashes = [];
    await rpc.send('evm_setAutomine', [false]);
    try {
      await rpc.send('evm_setBlockGasLimit', [ethers.toQuantity(gasLimit * BigInt(calls.length + 1))]);
      for (let i = 0; i < raws.length; i += 50) {
        hashes.push(...(await Promise.all(raws.slice(i, i + 50).map((raw) => rpc.send('eth_sendRawTransaction', [raw])))));
      }
      await rpc.send('anvil_mine', ['0x1']);
    } finally {
      await rpc.send('evm_setBlockGasLimit', [blockGasLimit]);
      await rpc.send('evm_setAutomine', [true]);
      await rpc.send('anvil_mine', ['0x1']);
    }
    const receipts = await Promise.all(hashes.map((h) => rpc.getTransactionReceipt(h)));
    receipts.forEach((r, i) => assert.equal(r?.status, 1, `call ${i} (${calls[i][0]}) failed`));
    return receipts;
  }

  /// Gas of a view call (estimateGas less the 21000 of a transaction).
  async function viewGas(fn, args) {
    return (await rpc.estimateGas({ to: address, data: iface.encodeFunctionData(fn, args) })) - 21000n;
  }

  /// Walks a paged view with page size 100 the way the worker does: continue at offset + page.length
  /// until total. Returns {items, calls, shortPages, maxGas}.
  async function walk(fn, head) {
    const items = [];
    let offset = 0n;
    let calls = 0;
    let shortPages = 0;
    let maxGas = 0n;
    for (;;) {
      const [page, total] = await view[fn](...head, offset, 100);
      const gas = await viewGas(fn, [...head, offset, 100]);
      if (gas > maxGas) maxGas = gas;
      calls++;
      items.push(...page);
      offset += BigInt(page.length);
      if (offset >= total || page.length === 0) return { items, calls, shortPages, maxGas };
      if (page.length < 100) shortPages++;
      assert.ok(calls <= 100, `${fn} does not end`);
    }
  }

  it('pages of long items stop at the word budget and still cover every item', async () => {
    const acct = await account();
    const h = acct.hash;
    const budget = await view.PAGE_WORD_BUDGET();
    assert.equal(budget, 4096n);
    const pkps = Array.from({ length: 100 }, () => ethers.Wallet.createRandom().address);
    const cids = Array.from({ length: 100 }, (_, i) => cid(`scale-page-${i}`));
    // 100 wallets and 100 actions with the longest text: 143 and 141 words each, 28 and 29 a page.
    await sendAll(acct.adminWallet, [
      ...pkps.map((p) => ['registerWalletDerivation', [h, p, randomUint(), LONG_NAME, LONG_DESCRIPTION]]),
      ...cids.map((c) => ['addAction', [h, 0, c, LONG_NAME, LONG_DESCRIPTION]]),
    ]);
    // 13 groups of 100 PKPs and 100 CIDs with the longest text (343 words each: 11 a page).
    await sendAll(acct.adminWallet, Array.from({ length: 13 }, (_, i) => ['addGroup', [h, 0, LONG_NAME, `${i}`.padEnd(4096, '.'), pkps, cids]]));
    // 8 usage keys with 4 x 100 scope ids and the longest text (550 words each: 7 a page).
    const ids = Array.from({ length: 100 }, (_, i) => i + 1);
    const keys = Array.from({ length: 8 }, () => randomUint());
    await sendAll(acct.adminWallet, keys.map((k) => ['setUsageApiKey', [h, k, ...perms({ name: LONG_NAME, description: LONG_DESCRIPTION, manage: ids, addPkp: ids, removePkp: ids, execute: ids })]]));

    const expectations = [
      ['listGroups', [h], 13, 2],
      ['listWallets', [h], 100, 4],
      ['listActions', [h], 100, 4],
      ['listWalletsInGroup', [h, 1], 100, 4],
      ['listActionsInGroup', [h, 1], 100, 4],
      ['listUsageKeys', [h], 8, 2],
    ];
    for (const [fn, head, count, calls] of expectations) {
      const w = await walk(fn, head);
      assert.equal(w.items.length, count, `${fn}: every item`);
      assert.equal(w.calls, calls, `${fn}: calls for one page of 100`);
      assert.ok(w.shortPages > 0, `${fn}: the budget cut a page`);
      assert.ok(w.maxGas < CALL_GAS_CAP, `${fn}: ${w.maxGas} gas in one call`);
    }
    // Items come back whole and in list order across the cut.
    const groups = (await walk('listGroups', [h])).items;
    assert.deepEqual(groups.map((g) => Number(g.id)), Array.from({ length: 13 }, (_, i) => i + 1));
    assert.ok(groups.every((g) => g.pkps.length === 100 && g.cidHashes.length === 100 && g.name === LONG_NAME));
    assert.deepEqual((await walk('listWallets', [h])).items.map((x) => x.wallet), pkps);
    assert.deepEqual((await walk('listUsageKeys', [h])).items.map((x) => x.keyHash), keys);
    // A page asked past the end is empty and still tells the length; size is capped at 100.
    const [past, total] = await view.listGroups(h, 13, 100);
    assert.deepEqual([past.length, total], [0, 13n]);
    const [small] = await view.listActions(h, 0, 1000);
    assert.equal(small.length, 29);
  });

  it('canExecute costs the same for the last of 1, 100 and 300 groups', async () => {
    const acct = await account();
    const h = acct.hash;
    const pkp = await chain.pkp(h, acct.admin);
    const other = await chain.pkp(h, acct.admin);
    const scoped = randomUint();
    const gas = {};
    let made = 0;
    for (const n of [1, 100, 300]) {
      // Groups that list other CIDs and PKPs, then the matching group last.
      const calls = [];
      for (; made < n - 1; made++) calls.push(['addGroup', [h, 0, 'g', '', [other], [cid(`filler-${made}`)]]]);
      calls.push(['addGroup', [h, 0, 'match', '', [pkp], [cid(`match-${n}`)]]]);
      made++;
      calls.push(['setUsageApiKey', [h, scoped, ...perms({ execute: [made] })]]);
      await sendAll(acct.adminWallet, calls);
      assert.equal(await view.groupCount(h), BigInt(made));
      const c = cid(`match-${n}`);
      for (const [who, key] of [['owner', h], ['scoped', scoped]]) {
        assert.equal(await view.canExecute(key, c, pkp), true);
        assert.equal(await view.canExecute(key, c, other), false);
        assert.equal(await view.canExecute(key, cid('nowhere'), pkp), false);
        assert.equal(await view.canExecuteAction(key, c), true);
        gas[`${who} ${n}`] = [await viewGas('canExecute', [key, c, pkp]), await viewGas('canExecute', [key, cid('nowhere'), pkp]),
          await viewGas('canExecuteAction', [key, c])];
      }
    }
    // Equal up to the calldata's zero bytes (the CIDs differ); before the chains, the owner's last
    // of 300 groups cost ~2.1M gas (~6,900 a group).
    const shown = JSON.stringify(gas, (k, v) => (typeof v === 'bigint' ? Number(v) : v));
    console.log(`# canExecute, canExecute (no group), canExecuteAction gas: ${shown}`);
    for (const who of ['owner', 'scoped']) {
      gas[`${who} 300`].forEach((g, i) => {
        const d = g - gas[`${who} 1`][i];
        assert.ok(d < 200n && d > -200n, `${who}: ${shown}`);
        assert.ok(g < 40000n, `${who}: ${shown}`);
      });
    }
  });

  it('canExecute agrees with a model of the groups under every kind of write', async () => {
    const acct = await account();
    const h = acct.hash;
    const P = [];
    for (let i = 0; i < 3; i++) P.push(await chain.pkp(h, acct.admin));
    const C = [cid('m0'), cid('m1'), cid('m2')];
    const model = new Map(); // group id -> {pkps: Set, cids: Set}
    let lastId = 0;
    // A fixed pseudo-random sequence, so a failure replays.
    let seed = 123;
    const rnd = (n) => { seed = (seed * 48271) % 2147483647; return Math.floor((seed / 2147483647) * n); };
    const done = {};
    const pick = (arr) => arr[rnd(arr.length)];
    const subset = (arr) => arr.filter(() => rnd(2) === 1);
    const check = async (step) => {
      const checks = [];
      for (const c of C) {
        const anyGroup = [...model.values()].some((g) => g.cids.has(c));
        checks.push(view.canExecuteAction(h, c).then((v) => assert.equal(v, anyGroup, `step ${step}: canExecuteAction`)));
        for (const p of P) {
          const want = [...model.values()].some((g) => g.cids.has(c) && g.pkps.has(p));
          checks.push(view.canExecute(h, c, p).then((v) => assert.equal(v, want, `step ${step}: canExecute(${C.indexOf(c)}, ${P.indexOf(p)})`)));
        }
      }
      // The group views agree with the model too.
      for (const [id, m] of model) {
        checks.push(view.getGroup(h, id).then((v) => {
          assert.deepEqual([...v.pkps].sort(), [...m.pkps].sort(), `step ${step}: group ${id} PKPs`);
          assert.deepEqual([...v.cidHashes].sort(), [...m.cids].sort(), `step ${step}: group ${id} CIDs`);
        }));
      }
      await Promise.all(checks);
    };
    for (let step = 0; step < 50; step++) {
      const ids = [...model.keys()];
      const op = ids.length < 2 ? 0 : rnd(7);
      const g = ids.length ? pick(ids) : 0;
      let call;
      if (op === 0 && ids.length < 6) {
        const pk = subset(P);
        const cs = subset(C);
        call = ['addGroup', [h, 0, 'g', '', pk, cs]];
        model.set(++lastId, { pkps: new Set(pk), cids: new Set(cs) });
      } else if (op === 1) {
        call = ['removeGroup', [h, 0, g]];
        model.delete(g);
      } else if (op === 2 || op === 0) {
        const c = C.find((x) => !model.get(g).cids.has(x));
        if (!c) continue;
        call = ['addActionToGroup', [h, 0, g, c]];
        model.get(g).cids.add(c);
      } else if (op === 3) {
        const c = [...model.get(g).cids][0];
        if (!c) continue;
        call = ['removeActionFromGroup', [h, 0, g, c]];
        model.get(g).cids.delete(c);
      } else if (op === 4) {
        const p = P.find((x) => !model.get(g).pkps.has(x));
        if (!p) continue;
        call = ['addPkpToGroup', [h, 0, g, p]];
        model.get(g).pkps.add(p);
      } else if (op === 5) {
        const p = [...model.get(g).pkps][0];
        if (!p) continue;
        call = ['removePkpFromGroup', [h, 0, g, p]];
        model.get(g).pkps.delete(p);
      } else {
        // Both sets replaced, in a shuffled order, renamed so it is never a no-op.
        const pk = subset(P).sort(() => rnd(3) - 1);
        const cs = subset(C).sort(() => rnd(3) - 1);
        call = ['updateGroup', [h, 0, g, `step ${step}`, '', pk, cs]];
        model.set(g, { pkps: new Set(pk), cids: new Set(cs) });
      }
      await sendAll(acct.adminWallet, [call]);
      await check(step);
      done[call[0]] = (done[call[0]] ?? 0) + 1;
    }
    for (const fn of ['addGroup', 'removeGroup', 'addActionToGroup', 'removeActionFromGroup', 'addPkpToGroup',
      'removePkpFromGroup', 'updateGroup']) {
      assert.ok(done[fn] >= 3, `the sequence exercises ${fn}: ${JSON.stringify(done)}`);
    }
  });

  it('a full group (256 PKPs, 256 CIDs) is renamed, edited and removed within a transaction\'s gas', async () => {
    const acct = await account();
    const h = acct.hash;
    const pkps = Array.from({ length: 256 }, () => ethers.Wallet.createRandom().address);
    const cids = Array.from({ length: 256 }, (_, i) => cid(`full-${i}`));
    await sendAll(acct.adminWallet, pkps.map((p) => ['registerWalletDerivation', [h, p, randomUint(), 'p', '']]));
    const calls = [['addGroup', [h, 0, 'full', '', pkps.slice(0, 100), cids.slice(0, 100)]],
      ['addGroup', [h, 0, 'neighbour', '', pkps.slice(0, 1), cids.slice(0, 100)]]];
    for (let i = 100; i < 256; i++) calls.push(['addPkpToGroup', [h, 0, 1, pkps[i]]], ['addActionToGroup', [h, 0, 1, cids[i]]]);
    await sendAll(acct.adminWallet, calls);
    assert.equal(await view.groupWalletCount(h, 1), 256n);
    assert.equal(await view.groupActionCount(h, 1), 256n);
    // Renaming sends the sets back unchanged (as the worker does when update_group omits them).
    const [rename] = await sendAll(acct.adminWallet, [['updateGroup', [h, 0, 1, 'renamed', 'full group', pkps, cids]]]);
    assert.ok(rename.gasUsed < 3_000_000n, `rename: ${rename.gasUsed} gas`);
    assert.equal((await view.getGroup(h, 1)).name, 'renamed');
    // Dropping the first of each moves every other member one place: the dearest edit there is.
    const [edit] = await sendAll(acct.adminWallet, [['updateGroup', [h, 0, 1, 'renamed', 'full group', pkps.slice(1), cids.slice(1)]]]);
    assert.ok(edit.gasUsed < CALL_GAS_CAP, `edit: ${edit.gasUsed} gas`);
    assert.equal(await view.canExecute(h, cids[0], pkps[0]), true, 'the neighbour still lists both');
    assert.equal(await view.canExecute(h, cids[0], pkps[1]), false);
    assert.equal(await view.canExecute(h, cids[200], pkps[1]), true);
    // More than MAX_ITEMS_PER_CALL new members in one call is refused; a group never exceeds 256.
    await reverts(acct.admin.updateGroup.staticCall(h, 0, 2, 'n', '', pkps.slice(0, 102), []), 'TooMany');
    const [removal] = await sendAll(acct.adminWallet, [['removeGroup', [h, 0, 1]]]);
    assert.ok(removal.gasUsed < CALL_GAS_CAP, `removeGroup: ${removal.gasUsed} gas`);
    assert.equal(await view.canExecute(h, cids[200], pkps[1]), false);
    assert.equal(await view.canExecute(h, cids[50], pkps[0]), true, 'the neighbour is still chained');
    assert.equal(await view.canExecuteAction(h, cids[150]), false);
    console.log(`# full group: rename ${rename.gasUsed} gas, edit ${edit.gasUsed}, removeGroup ${removal.gasUsed}`);
  });
});
