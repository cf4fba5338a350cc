#!/usr/bin/env node
// Soak-and-fault test (DESIGN.md section 10, issue 15): a mixed workload at a steady rate against the
// whole stack (tests/api/stack.mjs) while faults are injected in turn, each followed by a recovery
// window: worker kill -9, sandbox zygote kill -9 (mid-run), keyd kill -9 and restart, the chain node paused (SIGSTOP/SIGCONT), the
// chain node restarted with its state, nginx reload (SIGHUP), supervisor SIGHUP, and a gateway that
// serves wrong bytes for a CID. Every write the service acknowledged (2xx) is recorded and checked
// on chain afterwards (and through the API's list endpoints); any 500 is counted.
//
//   node tests/soak/soak.mjs [--seconds 60] [--rate 10] [--workers 2] [--slot 8] [--recovery 3]
//                            [--seed N] [--max-inflight 24] [--quiet]
// Exit status 0 when every check holds (see checkSummary), 1 otherwise. The last line of output is
// `SOAK_SUMMARY {json}`. soak.test.mjs runs the 60-second version under ctest.
// Environment: SIGIL_BUILD_DIR, SIGIL_SOURCE_DIR as for the API tests; SIGIL_KEEP_STACK=1 keeps the
// stack's temporary folder (logs) after the run.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, ethers, keccakText, accountConfigAbi, perms } from '../api/stack.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const DEFAULTS = {
  seconds: 60,        // workload duration (extended until every fault of the first round has had its window)
  rate: 10,           // operations started per second (an operation is 1 or 2 requests)
  workers: 2,         // sigil-worker processes
  slot: 8,            // seconds from one fault's injection to the next one's
  recovery: 3,        // seconds after a fault ends that still count as its window
  warmup: 4,          // seconds of workload before the first fault
  maxInflight: 24,    // operations in flight at most; beyond it a tick is shed (counted) instead of queued
  seed: 15,
  quiet: false,
  drainSeconds: 45,   // how long to wait for in-flight requests at the end (a relayed write may wait 30 s)
  apiCheckAccounts: 30,
};

export const FAULTS = ['worker_kill', 'zygote_kill', 'keyd_restart', 'chain_pause', 'nginx_reload', 'chain_restart',
  'supervisor_hup', 'lying_gateway'];

// Thresholds of the checks (the ctest version asserts them, and so does the CLI's exit status).
export const LIMITS = {
  okRatioOutside: 0.97,  // requests outside every fault window that must succeed
  maxHttp500: 0,
  maxAckedMissing: 0,
  maxWrongAnswers: 0,
  maxUntypedErrors: 0,   // an error answer without the {"error":{"code","message"}} body
  maxHangs: 0,           // requests the client gave up on (60 s)
};

const SIGN_CODE = 'async function main({ pkpId, message }) { return await Lit.Actions.signMessage({ pkpId, message }); }';
const ENCRYPT_CODE = 'async function main({ pkpId, message }) { return await Lit.Actions.Encrypt({ pkpId, message }); }';
// Busy for `ms` milliseconds: in flight while a worker is killed or the service reloads.
const SLOW_CODE = 'function main({ ms }) { var t = Date.now(); while (Date.now() - t < ms) {} return "slow"; }';

function mulberry32(a) {
  return () => {
    a |= 0; a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]);
}

/// The pids and names of the processes whose parent is `ppid` (from /proc).
export function childrenOf(ppid) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = st.lastIndexOf(')');
      const comm = st.slice(st.indexOf('(') + 1, close);
      const ppid2 = Number(st.slice(close + 2).split(' ')[1]);
      if (ppid2 === ppid) out.push({ pid: Number(d), comm });
    } catch { /* exited meanwhile */ }
  }
  return out;
}
const workerPids = (supervisorPid) => (supervisorPid ? childrenOf(supervisorPid)
  .filter((p) => p.comm.startsWith('sigil-worker')).map((p) => p.pid) : []);

const isSandbox = (pid) => {
  try {
    return /(^|\/)sigil-sandbox$/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]);
  } catch { return false; }
};
/// The sandbox zygotes under the supervisor, found by their command line (`sigil-sandbox`): a
/// sigil-sandbox process whose parent is not one (each worker's own before issue 23, the supervisor's
/// shared ones after), with the pids of their run children (forked, so the same command line).
export function zygotesOf(supervisorPid) {
  const out = [];
  if (!supervisorPid) return out;
  const todo = [{ pid: supervisorPid, sandboxParent: false }];
  while (todo.length) {
    const { pid, sandboxParent } = todo.pop();
    for (const c of childrenOf(pid)) {
      const sandbox = isSandbox(c.pid);
      if (sandbox && !sandboxParent) out.push({ pid: c.pid, parent: pid, children: childrenOf(c.pid).map((k) => k.pid) });
      if (!sandbox) todo.push({ pid: c.pid, sandboxParent: false });
    }
  }
  return out;
}

/// Runs the soak. Returns the summary (see report()); never throws for a service failure, only for
/// a broken fixture (stack start, setup).
export async function runSoak(options = {}) {
  const o = { ...DEFAULTS, ...options };
  const log = o.quiet ? () => {} : (line) => console.log(`# ${line}`);
  const rnd = mulberry32(o.seed);
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];

  log(`soak: ${o.seconds} s at ${o.rate} ops/s, ${o.workers} workers, fault slot ${o.slot} s, recovery ${o.recovery} s, seed ${o.seed}`);
  const tStart = performance.now();
  const stack = await startStack({ workers: o.workers, chainState: true });
  log(`stack up in ${((performance.now() - tStart) / 1000).toFixed(1)} s at ${stack.url}`);
  let t0 = performance.now();
  const now = () => performance.now() - t0;

  const samples = [];            // one per request: {op, start, end, status, code, ok, rid}
  const acks = [];               // acknowledged writes: {kind, at, ...}
  const windows = [];            // fault windows: {fault, start, faultEnd, end, detail, recoveredMs, error}
  const failures = { http500: [], untyped: [], wrong: [], hangs: [] };
  const examples = new Map();    // "status code" -> first few {op, at, rid, text}
  let shed = 0;
  let counter = 0;
  const nextId = () => ++counter;
  const accounts = [];           // acknowledged accounts usable by the workload
  const base = [];               // accounts with a runners group, a PKP and the two actions
  const cids = {};
  let inSetup = true;

  async function call(op, method, path, opts = {}, judge = null) {
    const start = now();
    let res = null;
    let status;
    let code = null;
    try {
      res = await stack.request(method, path, opts);
      status = res.status;
      if (status >= 400) {
        const e = res.json?.error;
        const typed = e && typeof e === 'object' && typeof e.code === 'string' && typeof e.message === 'string';
        code = typed ? e.code : 'untyped';
      }
    } catch (err) {
      status = 0;
      code = /^timeout:/.test(err.message) ? 'client_timeout' : (err.code ?? 'network_error');
    }
    const end = now();
    let ok = status >= 200 && status < 300;
    if (ok && judge) {
      const verdict = judge(res);  // null: right; string: the run's error code; {wrong: why}: a wrong answer
      if (verdict && typeof verdict === 'object') {
        ok = false;
        code = 'wrong_answer';
        failures.wrong.push({ op, at: +(start / 1000).toFixed(2), why: verdict.wrong, text: res.text.slice(0, 300) });
      } else if (verdict) {
        ok = false;
        code = verdict;
      }
    }
    const rid = res?.headers?.['x-request-id'] ?? null;
    const sample = { op, start, end, status, code, ok, rid, setup: inSetup };
    samples.push(sample);
    const detail = () => ({ op, method, path, at: +(start / 1000).toFixed(2), ms: Math.round(end - start), status, code, rid,
      body: opts.body ? JSON.stringify(opts.body).slice(0, 300) : undefined, text: res?.text?.slice(0, 400) });
    if (status === 500) failures.http500.push(detail());
    if (code === 'untyped') failures.untyped.push(detail());
    if (code === 'client_timeout') failures.hangs.push(detail());
    if (!ok) {
      const k = `${status} ${code}`;
      if (!examples.has(k)) examples.set(k, []);
      if (examples.get(k).length < 3) examples.get(k).push(detail());
    }
    return { res, ok, status, code };
  }
  const ack = (kind, fields) => acks.push({ kind, at: now(), ...fields });

  // --- the operations -------------------------------------------------------------------------
  const ops = {
    async new_account() {
      const n = nextId();
      const { res, ok } = await call('new_account', 'POST', 'new_account',
        { body: { account_name: `soak ${n}`, account_description: 'soak test account' } },
        (r) => (typeof r.json?.api_key === 'string' ? null : { wrong: 'no api_key' }));
      if (!ok) return null;
      const a = { key: res.json.api_key, hash: BigInt(keccakText(res.json.api_key)), groups: [], usage: [], n };
      ack('account', { acct: a });
      accounts.push(a);
      return a;
    },
    async usage_key(a = pick(accounts)) {
      const n = nextId();
      const name = `usage ${n}`;
      const p = a.runners ? { execute_in_groups: [Number(a.runners)] } : { can_create_groups: true };
      const { res, ok } = await call('add_usage_api_key', 'POST', 'add_usage_api_key',
        { key: a.key, body: { name, description: 'soak', ...perms(p) } },
        (r) => (typeof r.json?.usage_api_key === 'string' ? null : { wrong: 'no usage_api_key' }));
      if (!ok) return null;
      ack('usage_key', { acct: a, key: res.json.usage_api_key, name });
      a.usage.push(res.json.usage_api_key);
      return res.json.usage_api_key;
    },
    async add_group(a = pick(accounts), name = `group ${nextId()}`) {
      const { res, ok } = await call('add_group', 'POST', 'add_group', {
        key: a.key, body: { group_name: name, group_description: 'soak', pkp_ids_permitted: [], cid_hashes_permitted: [] },
      }, (r) => (/^[1-9][0-9]*$/.test(r.json?.group_id ?? '') ? null : { wrong: 'no group_id' }));
      if (!ok) return null;
      ack('group', { acct: a, groupId: res.json.group_id, name });
      return res.json.group_id;
    },
    async cid(code) {
      const { res, ok } = await call('get_ipfs_id', 'POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) },
        (r) => (/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/.test(r.json ?? '') ? null : { wrong: 'not a CIDv0' }));
      return ok ? res.json : null;
    },
    async add_action(a = pick(accounts), groupId = null, code = null) {
      if (!groupId) {
        if (a.groups.length === 0) { const g = await ops.add_group(a); if (g) a.groups.push(g); return; }
        groupId = pick(a.groups);
      }
      const cid = await ops.cid(code ?? `// soak ${nextId()}\nfunction main() { return ${counter}; }`);
      if (!cid) return null;
      const { ok } = await call('add_action_to_group', 'POST', 'add_action_to_group',
        { key: a.key, body: { group_id: groupId, action_ipfs_cid: cid } });
      if (!ok) return null;
      ack('group_action', { acct: a, groupId, cid });
      return cid;
    },
    async wallet(a = pick(accounts), groupId = undefined) {
      const { res, ok } = await call('create_wallet', 'GET', 'create_wallet', { key: a.key },
        (r) => (ethers.isAddress(r.json?.wallet_address ?? '') ? null : { wrong: 'no wallet_address' }));
      if (!ok) return null;
      const pkp = res.json.wallet_address.toLowerCase();
      ack('wallet', { acct: a, pkp });
      const g = groupId === undefined ? (a.groups.length ? pick(a.groups) : null) : groupId;
      if (!g) return pkp;
      const r2 = await call('add_pkp_to_group', 'POST', 'add_pkp_to_group', { key: a.key, body: { group_id: g, pkp_id: pkp } });
      if (!r2.ok) return null;
      ack('group_pkp', { acct: a, groupId: g, pkp });
      return pkp;
    },
    async read(a = pick(accounts)) {
      const which = pick(['list_groups', 'list_api_keys', 'list_wallets', 'list_actions']);
      const query = which === 'list_groups' ? { page_number: 0, page_size: 10 } : undefined;
      await call(which, 'GET', which, { key: a.key, query }, (r) => (Array.isArray(r.json) ? null : { wrong: 'not a list' }));
    },
    async run(kind) {
      const b = pick(base);
      const key = b.usage.length > 1 && rnd() < 0.5 ? pick(b.usage) : b.executor;
      const message = `soak ${nextId()}`;
      const code = kind === 'sign' ? SIGN_CODE : ENCRYPT_CODE;
      const byCid = rnd() < 0.3;
      const body = { ...(byCid ? { ipfs_id: cids[kind] } : { code }), pkp_id: b.pkp, js_params: { pkpId: b.pkp, message } };
      await call(`run_${kind}${byCid ? '_cid' : ''}`, 'POST', 'sigil_action', { key, body }, (r) => {
        const j = r.json;
        if (!j || typeof j !== 'object') return { wrong: 'not JSON' };
        if (j.has_error) return `run_${j.error?.code ?? 'error'}`;
        if (kind === 'sign') {
          try {
            return ethers.verifyMessage(message, j.response).toLowerCase() === b.pkp ? null : { wrong: 'signature by another key' };
          } catch (e) { return { wrong: `bad signature: ${e.message}` }; }
        }
        return /^[0-9a-f]{58,}$/.test(j.response ?? '') ? null : { wrong: 'not a ciphertext' };
      });
    },
  };
  const MIX = [
    [1, () => ops.new_account()],
    [1, () => ops.usage_key()],
    [1, async () => {  // a group joins the account's groups only when acknowledged
      const a = pick(accounts);
      const g = await ops.add_group(a);
      if (g) a.groups.push(g);
    }],
    [1, () => ops.add_action()],
    [1, () => ops.wallet()],
    [3, () => ops.read()],
    [2, () => ops.run('sign')],
    [2, () => ops.run('encrypt')],
  ];
  const totalWeight = MIX.reduce((s, [w]) => s + w, 0);
  async function oneOp() {
    let x = rnd() * totalWeight;
    for (const [w, f] of MIX) {
      if ((x -= w) < 0) return f();
    }
    return null;
  }

  // --- the faults -----------------------------------------------------------------------------
  const probeOnce = async (fault) => {
    const b = base[0];
    if (fault === 'zygote_kill') {
      // Every zygote serves again: runs at once, spread over the workers (one kept connection would
      // reach one worker only), all succeed; a dead zygote fails some of them.
      const rs = await Promise.all(Array.from({ length: Math.max(6, 3 * o.workers) }, (_, i) => {
        const bb = base[i % base.length];
        return call('probe', 'POST', 'sigil_action', { key: bb.executor, body: { code: SIGN_CODE, pkp_id: bb.pkp, js_params: { pkpId: bb.pkp, message: 'probe' } } },
          (res) => (res.json?.has_error ? `run_${res.json.error?.code}` : null));
      }));
      return rs.every((r) => r.ok);
    }
    if (fault === 'keyd_restart') {
      const message = 'probe';
      return (await call('probe', 'POST', 'sigil_action', { key: b.executor, body: { code: SIGN_CODE, pkp_id: b.pkp, js_params: { pkpId: b.pkp, message } } },
        (r) => (r.json?.has_error ? `run_${r.json.error?.code}` : null))).ok;
    }
    return (await call('probe', 'GET', 'list_groups', { key: b.key, query: { page_number: 0, page_size: 1 } })).ok;
  };
  let cycle = 0;
  // Starts `n` runs of SLOW_CODE (`ms` each) and returns their answers' statuses once all are done.
  const slowRuns = (n, ms) => Promise.all(Array.from({ length: n }, (_, i) => {
    const b = base[i % base.length];
    return call('run_slow', 'POST', 'sigil_action', { key: b.executor, body: { code: SLOW_CODE, js_params: { ms } } },
      (r) => (r.json?.response === 'slow' ? null : (r.json?.has_error ? `run_${r.json.error?.code}` : { wrong: 'not "slow"' })));
  })).then((rs) => rs.map((r) => (r.ok ? 200 : `${r.status} ${r.code}`)));
  const countOf = (list) => JSON.stringify(list.reduce((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {}));
  const inject = {
    async worker_kill(w) {
      const sup = stack.pidOf('supervisor');
      const before = workerPids(sup);
      const victims = cycle % 2 === 0 ? before : [pick(before)];
      const inflight = slowRuns(2, 800);  // busy workers: their requests get a typed 502, never a 500
      await sleep(250);
      for (const pid of victims) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      w.detail = `kill -9 of ${victims.length} of ${before.length} workers`;
      const t = performance.now();
      while (performance.now() - t < 10000) {
        const nowPids = workerPids(sup);
        // A dynamic pool (issue 23) refills to its floor (`workers`) at least, not to what it had grown to.
        if (nowPids.length >= Math.min(before.length, o.workers) && !nowPids.some((p) => victims.includes(p))) break;
        await sleep(50);
      }
      w.detail += `, pool refilled after ${Math.round(performance.now() - t)} ms; runs in flight: ${countOf(await inflight)}`;
    },
    async zygote_kill(w) {
      const sup = stack.pidOf('supervisor');
      const inflight = slowRuns(2, 800);  // runs in their children: typed errors or 200, never a 500
      await sleep(250);
      const before = zygotesOf(sup);
      if (before.length === 0) throw new Error('no sigil-sandbox zygote under the supervisor');
      // Mid-run: a zygote with a run child alive, if any.
      const busy = before.filter((z) => z.children.length > 0);
      const victim = pick(busy.length ? busy : before);
      try { process.kill(victim.pid, 'SIGKILL'); } catch { /* gone */ }
      w.detail = `kill -9 of sandbox zygote ${victim.pid} (parent ${victim.parent === sup ? 'the supervisor' : victim.parent}, ` +
        `${victim.children.length} run children) of ${before.length}`;
      const t = performance.now();
      w.zygoteBack = false;
      while (performance.now() - t < 10000) {
        const now = zygotesOf(sup);
        if (now.length >= before.length && !now.some((z) => z.pid === victim.pid)) { w.zygoteBack = true; break; }
        await sleep(50);
      }
      w.detail += w.zygoteBack ? `, ${before.length} zygotes again after ${Math.round(performance.now() - t)} ms`
        : `, NOT replaced within 10 s (${zygotesOf(sup).length} zygotes)`;
      w.detail += `; runs in flight: ${countOf(await inflight)}`;
    },
    async keyd_restart(w) {
      const old = stack.pidOf('keyd');
      await stack.restart('keyd', { signal: 'SIGKILL', downMs: 1500 });
      w.detail = `kill -9 of keyd ${old}, 1.5 s down, restarted as ${stack.pidOf('keyd')}`;
    },
    async chain_pause(w) {
      const pid = stack.anvilPid;
      process.kill(pid, 'SIGSTOP');
      try { await sleep(2500); } finally { process.kill(pid, 'SIGCONT'); }
      w.detail = `anvil ${pid} stopped for 2.5 s`;
    },
    async chain_restart(w) {
      const old = stack.anvilPid;
      const t = performance.now();
      await stack.restart('devchain', { signal: 'SIGTERM', downMs: 500 });
      w.detail = `anvil ${old} stopped (SIGTERM, state kept), back as ${stack.anvilPid} after ${Math.round(performance.now() - t)} ms`;
    },
    async nginx_reload(w) {
      const inflight = slowRuns(2, 800);  // a graceful reload finishes them
      await sleep(250);
      process.kill(stack.pidOf('nginx'), 'SIGHUP');
      const done = await inflight;
      w.gracefulLost = done.filter((x) => x !== 200).length;
      w.detail = `SIGHUP to the nginx master; runs in flight: ${countOf(done)}`;
    },
    async supervisor_hup(w) {
      const sup = stack.pidOf('supervisor');
      const before = workerPids(sup);
      const inflight = slowRuns(2, 800);  // a graceful reload finishes them
      await sleep(250);
      process.kill(sup, 'SIGHUP');
      const t = performance.now();
      let replaced = false;
      while (performance.now() - t < 10000 && !replaced) {
        await sleep(50);
        const nowPids = workerPids(sup);
        replaced = nowPids.length >= Math.min(before.length, o.workers) && !nowPids.some((p) => before.includes(p));
      }
      const done = await inflight;
      w.gracefulLost = done.filter((x) => x !== 200).length;
      w.detail = `SIGHUP to the supervisor; workers ${replaced ? `replaced after ${Math.round(performance.now() - t)} ms` : 'NOT all replaced within 10 s'}; runs in flight: ${countOf(done)}`;
      if (!replaced) w.notes = 'old workers still running 10 s after SIGHUP';
    },
    async lying_gateway(w) {
      const n = nextId();
      const honest = `async function main() { return "honest ${n}"; }`;
      const cid = await ops.cid(honest);
      if (!cid) throw new Error('no CID for the lying gateway');
      const b = base[0];
      let added = null;
      for (let i = 0; i < 3 && !added; i++) added = await ops.add_action(b, b.runners, honest);
      if (!added) throw new Error('could not list the lying CID in the runners group');
      writeFileSync(join(stack.gatewayDir, cid), `async function main() { return "evil ${n}"; }`, { mode: 0o644 });
      let asked = 0;
      let typed = 0;
      const t = performance.now();
      while (performance.now() - t < 3000) {
        asked++;
        const r = await call('run_lying_cid', 'POST', 'sigil_action', { key: b.executor, body: { ipfs_id: cid } });
        if (r.status === 502 && r.code === 'ipfs_cid_mismatch') typed++;
        else w.lyingWrong = (w.lyingWrong ?? 0) + 1;
        await sleep(400);
      }
      // The gateway tells the truth again: the CID runs (the wrong bytes were never cached).
      writeFileSync(join(stack.gatewayDir, cid), honest, { mode: 0o644 });
      w.lyingCid = cid;
      w.honest = `honest ${n}`;
      w.detail = `${typed} of ${asked} runs by a lying CID answered 502 ipfs_cid_mismatch`;
      w.lyingAsked = asked;
      w.lyingTyped = typed;
    },
  };
  async function recoveryProbe(w) {
    if (w.fault === 'lying_gateway') {
      if (!w.lyingCid) return null;
      const b = base[0];
      const t = performance.now();
      while (performance.now() - t < 20000) {
        const r = await call('probe', 'POST', 'sigil_action', { key: b.executor, body: { ipfs_id: w.lyingCid } },
          (res) => (res.json?.response === w.honest ? null : { wrong: `lying CID after repair: ${res.text.slice(0, 100)}` }));
        if (r.ok) return performance.now() - t;
        if (r.code === 'wrong_answer') return null;
        await sleep(100);
      }
      return null;
    }
    const t = performance.now();
    while (performance.now() - t < 30000) {
      if (await probeOnce(w.fault)) return performance.now() - t;
      await sleep(100);
    }
    return null;
  }
  async function runFault(fault) {
    const w = { fault, cycle, start: now(), faultEnd: null, end: null, detail: '', recoveredMs: null, error: null };
    windows.push(w);
    log(`fault ${fault} at ${(w.start / 1000).toFixed(1)} s`);
    try {
      await inject[fault](w);
    } catch (err) {
      w.error = err.message;
    }
    w.faultEnd = now();
    const rec = await recoveryProbe(w);
    w.recoveredMs = rec === null ? null : Math.round(rec);
    const minEnd = w.faultEnd + o.recovery * 1000;
    while (now() < minEnd) await sleep(50);
    w.end = now();
    log(`fault ${fault} window ${(w.start / 1000).toFixed(1)}-${(w.end / 1000).toFixed(1)} s: ${w.detail}` +
      `${w.error ? `; ERROR ${w.error}` : ''}; recovered in ${w.recoveredMs ?? 'never'} ms`);
  }

  let summary;
  try {
    // --- setup: base accounts with a runners group, a PKP, the two actions and an executor key ---
    cids.sign = await ops.cid(SIGN_CODE);
    cids.encrypt = await ops.cid(ENCRYPT_CODE);
    if (!cids.sign || !cids.encrypt) throw new Error('setup: get_sigil_action_ipfs_id failed');
    writeFileSync(join(stack.gatewayDir, cids.sign), SIGN_CODE, { mode: 0o644 });
    writeFileSync(join(stack.gatewayDir, cids.encrypt), ENCRYPT_CODE, { mode: 0o644 });
    const must = (v, what) => { if (!v) throw new Error(`setup: ${what} failed: ${JSON.stringify([...examples.values()].flat().slice(-1))}`); return v; };
    await Promise.all([0, 1, 2].map(async () => {
      const a = must(await ops.new_account(), 'new_account');
      a.runners = must(await ops.add_group(a, 'runners'), 'add_group');
      a.pkp = must(await ops.wallet(a, a.runners), 'create_wallet + add_pkp_to_group');
      must(await ops.add_action(a, a.runners, SIGN_CODE), 'add_action_to_group (sign)');
      must(await ops.add_action(a, a.runners, ENCRYPT_CODE), 'add_action_to_group (encrypt)');
      must(await ops.add_action(a, a.runners, SLOW_CODE), 'add_action_to_group (slow)');
      a.executor = must(await ops.usage_key(a), 'add_usage_api_key');
      base.push(a);
    }));
    for (const b of base) {
      const r = await call('setup_run', 'POST', 'sigil_action', { key: b.executor, body: { ipfs_id: cids.sign, pkp_id: b.pkp, js_params: { pkpId: b.pkp, message: 'x' } } });
      must(r.ok && !r.res.json?.has_error, `a first run (${r.status} ${r.res?.text?.slice(0, 200)})`);
    }
    inSetup = false;
    const setupSeconds = now() / 1000;
    log(`setup done in ${setupSeconds.toFixed(1)} s: ${base.length} base accounts, sign CID ${cids.sign}`);

    // --- the workload and the faults, together ---------------------------------------------------
    t0 = performance.now();
    const runFor = o.seconds * 1000;
    let inflight = 0;
    const pending = new Set();
    let faultsDone = false;
    const faultLoop = (async () => {
      try {
        await sleep(o.warmup * 1000);
        let next = o.warmup * 1000;
        for (let i = 0; ; i++) {
          // The first round always runs in full; later rounds only while a whole slot fits.
          if (i >= FAULTS.length && now() + o.slot * 1000 > runFor) break;
          cycle = Math.floor(i / FAULTS.length);
          await runFault(FAULTS[i % FAULTS.length]);
          next = Math.max(next + o.slot * 1000, now() + 2000);  // at least 2 s quiet after a window
          while (now() < next) await sleep(50);
        }
      } finally {
        faultsDone = true;
      }
    })();
    const interval = 1000 / o.rate;
    let tick = 0;
    while (now() < runFor || !faultsDone) {
      tick++;
      if (inflight < o.maxInflight) {
        inflight++;
        const p = oneOp().catch((err) => { failures.wrong.push({ op: 'workload', why: `exception: ${err.stack}` }); })
          .finally(() => { inflight--; pending.delete(p); });
        pending.add(p);
      } else {
        shed++;
      }
      const wait = tick * interval - now();
      if (wait > 0) await sleep(wait);
    }
    await faultLoop;
    const workloadEnd = now();
    let drainTimer;
    const drainDeadline = new Promise((r) => { drainTimer = setTimeout(() => r('timeout'), o.drainSeconds * 1000); });
    const drained = await Promise.race([Promise.all([...pending]).then(() => 'ok'), drainDeadline]);
    clearTimeout(drainTimer);
    if (drained !== 'ok') failures.hangs.push({ op: 'drain', why: `${pending.size} operations still in flight ${o.drainSeconds} s after the end` });
    log(`workload done at ${(workloadEnd / 1000).toFixed(1)} s; drained in ${((now() - workloadEnd) / 1000).toFixed(1)} s`);

    // --- every acknowledged write, on chain and through the API ----------------------------------
    const tVerify = performance.now();
    const missing = await verifyOnChain(stack, acks);
    const { missing: apiMissing, duplicates } = await verifyThroughApi(stack, accounts, acks, o.apiCheckAccounts, rnd);
    log(`checked ${acks.length} acknowledged writes in ${((performance.now() - tVerify) / 1000).toFixed(1)} s`);
    summary = report({ o, samples, windows, acks, missing, apiMissing, duplicates, failures, examples, shed, setupSeconds, stack });
  } finally {
    if (summary && !summaryOk(summary)) summary.logs = stack.home;
    if (stack.anvilPid) try { process.kill(stack.anvilPid, 'SIGCONT'); } catch { /* gone */ }
    const tStop = performance.now();
    await stack.stop();
    log(`stack stopped in ${((performance.now() - tStop) / 1000).toFixed(1)} s`);
  }
  if (summary) {
    for (const line of summary.lines) if (!line.startsWith('SOAK_SUMMARY') || !o.quiet) log(line);
    if (o.quiet) console.log(`# ${summary.lines.at(-1)}`);
    if (summary.logs && process.env.SIGIL_KEEP_STACK) log(`stack kept in ${summary.logs}`);
    delete summary.lines;
  }
  return summary;
}

/// Checks every acknowledged write against AccountConfig; returns the missing ones.
async function verifyOnChain(stack, acks) {
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1 });
  const c = new ethers.Contract(stack.contract, accountConfigAbi(), provider);
  const groups = new Map();
  const group = (acct, id) => {
    const k = `${acct.hash}:${id}`;
    if (!groups.has(k)) groups.set(k, c.getGroup(acct.hash, BigInt(id)).catch(() => null));
    return groups.get(k);
  };
  const check = async (a) => {
    switch (a.kind) {
      case 'account': {
        const [acctHash, isOwner, valid] = await c.resolveKey(a.acct.hash);
        return acctHash === a.acct.hash && isOwner && valid && (await c.accountExists(a.acct.hash));
      }
      case 'usage_key': {
        const [acctHash, isOwner, valid] = await c.resolveKey(BigInt(keccakText(a.key)));
        if (!(acctHash === a.acct.hash && !isOwner && valid)) return false;
        const k = await c.getUsageKey(a.acct.hash, BigInt(keccakText(a.key))).catch(() => null);
        return k?.name === a.name;
      }
      case 'group': {
        const g = await group(a.acct, a.groupId);
        return g !== null && g.id === BigInt(a.groupId) && g.name === a.name;
      }
      case 'group_action': {
        const g = await group(a.acct, a.groupId);
        return g !== null && g.cidHashes.includes(keccakText(a.cid));
      }
      case 'wallet': {
        const [acctHash] = await c.getWallet(a.pkp);
        return acctHash === a.acct.hash;
      }
      case 'group_pkp': {
        const g = await group(a.acct, a.groupId);
        return g !== null && g.pkps.some((p) => p.toLowerCase() === a.pkp);
      }
      default:
        throw new Error(`unknown write ${a.kind}`);
    }
  };
  const missing = [];
  for (let i = 0; i < acks.length; i += 8) {
    const batch = acks.slice(i, i + 8);
    const found = await Promise.all(batch.map((a) => check(a).catch((e) => `error: ${e.shortMessage ?? e.message}`)));
    batch.forEach((a, k) => { if (found[k] !== true) missing.push({ ...describeAck(a), result: found[k] }); });
  }
  provider.destroy();
  return missing;
}

function describeAck(a) {
  const { acct, kind, at, ...rest } = a;
  return { kind, at: +(at / 1000).toFixed(2), account: acct ? `0x${acct.hash.toString(16).slice(0, 12)}..` : undefined, ...rest };
}

/// Fresh reads through the API: the acknowledged groups and usage keys of some accounts are listed.
async function verifyThroughApi(stack, accounts, acks, maxAccounts, rnd) {
  const chosen = [...accounts].sort(() => rnd() - 0.5).slice(0, maxAccounts);
  const missing = [];
  const duplicates = [];
  for (const a of chosen) {
    const wantGroups = acks.filter((k) => k.kind === 'group' && k.acct === a).map((k) => k.groupId);
    const wantKeys = acks.filter((k) => k.kind === 'usage_key' && k.acct === a).map((k) => keccakText(k.key));
    const g = await stack.request('GET', 'list_groups', { key: a.key, query: { page_number: 0, page_size: 100 } });
    const k = await stack.request('GET', 'list_api_keys', { key: a.key, query: { page_number: 0, page_size: 100 } });
    if (g.status !== 200 || k.status !== 200) {
      missing.push({ account: a.n, why: `list answered ${g.status}/${k.status}: ${g.text.slice(0, 100)} ${k.text.slice(0, 100)}` });
      continue;
    }
    const haveGroups = new Set(g.json.map((x) => String(BigInt(x.id ?? x.group_id))));
    const haveKeys = new Set(k.json.map((x) => String(x.id).toLowerCase()));
    for (const id of wantGroups) if (!haveGroups.has(String(BigInt(id)))) missing.push({ account: a.n, why: `group ${id} not listed` });
    for (const h of wantKeys) if (!haveKeys.has(h.toLowerCase())) missing.push({ account: a.n, why: `usage key ${h} not listed` });
    // Every add_group and add_usage_api_key of the workload has its own name: two items with one name
    // are one request carried out twice (a request whose worker died must never be sent again).
    const seen = new Map();
    for (const x of [...g.json, ...k.json]) {
      if (!/^(group|usage) [0-9]+$/.test(x.name ?? '')) continue;
      seen.set(x.name, (seen.get(x.name) ?? 0) + 1);
    }
    for (const [name, n] of seen) if (n > 1) duplicates.push({ account: a.n, why: `${n} items named "${name}"` });
  }
  return { missing, duplicates };
}

function statsOf(list) {
  const lat = list.map((s) => s.end - s.start);
  const ok = list.filter((s) => s.ok).length;
  return { requests: list.length, ok, okRatio: list.length ? +(ok / list.length).toFixed(4) : null,
    p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat.length ? Math.round(Math.max(...lat)) : null };
}
function byStatus(list) {
  const m = {};
  for (const s of list) {
    const k = s.code ? `${s.status} ${s.code}` : String(s.status);
    m[k] = (m[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(m).sort((x, y) => y[1] - x[1]));
}

function report({ o, samples, windows, acks, missing, apiMissing, duplicates, failures, examples, shed, setupSeconds, stack }) {
  const run = samples.filter((s) => !s.setup);
  const overlaps = (s, w) => s.start <= w.end && s.end >= w.start;
  const inside = run.filter((s) => windows.some((w) => overlaps(s, w)));
  const outside = run.filter((s) => !windows.some((w) => overlaps(s, w)));
  const all = statsOf(run);
  const inS = statsOf(inside);
  const outS = statsOf(outside);
  const ackKinds = {};
  for (const a of acks) ackKinds[a.kind] = (ackKinds[a.kind] ?? 0) + 1;
  const duration = run.length ? Math.max(...run.map((s) => s.end)) / 1000 : 0;
  const faults = windows.map((w) => {
    const ws = run.filter((s) => overlaps(s, w));
    const st = statsOf(ws);
    return { fault: w.fault, cycle: w.cycle, start_s: +(w.start / 1000).toFixed(1), end_s: +(w.end / 1000).toFixed(1),
      fault_ms: Math.round(w.faultEnd - w.start), recovered_ms: w.recoveredMs, requests: st.requests, ok: st.ok,
      p99_ms: st.p99, status: byStatus(ws), detail: w.detail, error: w.error ?? undefined, notes: w.notes,
      lying_asked: w.lyingAsked, lying_typed: w.lyingTyped, graceful_lost: w.gracefulLost, zygote_back: w.zygoteBack };
  });
  const lines = [];
  lines.push(`soak: ${run.length} requests in ${duration.toFixed(1)} s (${(run.length / Math.max(duration, 1)).toFixed(1)}/s; setup ${setupSeconds.toFixed(1)} s, ${samples.length - run.length} setup requests), ${shed} ticks shed, ${o.workers} workers, seed ${o.seed}`);
  lines.push(`answers: ${JSON.stringify(byStatus(run))}`);
  lines.push(`500s: ${failures.http500.length}; untyped errors: ${failures.untyped.length}; wrong answers: ${failures.wrong.length}; hangs: ${failures.hangs.length}`);
  lines.push(`acknowledged writes: ${acks.length} ${JSON.stringify(ackKinds)}; missing on chain: ${missing.length}; missing through the API: ${apiMissing.length}; carried out twice: ${duplicates.length}`);
  lines.push(`outside fault windows: ${outS.requests} requests, ${outS.ok} ok (${((outS.okRatio ?? 0) * 100).toFixed(2)} %), p50 ${outS.p50} ms, p99 ${outS.p99} ms, max ${outS.max} ms`);
  lines.push(`inside fault windows:  ${inS.requests} requests, ${inS.ok} ok (${((inS.okRatio ?? 0) * 100).toFixed(2)} %), p50 ${inS.p50} ms, p99 ${inS.p99} ms, max ${inS.max} ms`);
  lines.push(`outside-window answers: ${JSON.stringify(byStatus(outside))}`);
  for (const f of faults) {
    lines.push(`window ${f.fault}${f.cycle ? ` #${f.cycle + 1}` : ''} ${f.start_s}-${f.end_s} s: fault ${f.fault_ms} ms, recovered ${f.recovered_ms ?? 'NEVER'} ms after; ` +
      `${f.requests} requests, ${f.ok} ok, p99 ${f.p99_ms} ms; ${JSON.stringify(f.status)}; ${f.detail}${f.error ? `; ERROR ${f.error}` : ''}`);
  }
  for (const [k, list] of examples) lines.push(`example ${k}: ${JSON.stringify(list[0])}`);
  for (const f of failures.http500) lines.push(`500: ${JSON.stringify(f)}${logLinesFor(stack, f.rid)}`);
  for (const f of failures.untyped.slice(0, 10)) lines.push(`untyped: ${JSON.stringify(f)}${logLinesFor(stack, f.rid)}`);
  for (const f of failures.wrong.slice(0, 10)) lines.push(`wrong answer: ${JSON.stringify(f)}`);
  for (const f of failures.hangs.slice(0, 10)) lines.push(`hang: ${JSON.stringify(f)}`);
  for (const m of missing.slice(0, 20)) lines.push(`missing on chain: ${JSON.stringify(m)}`);
  for (const m of apiMissing.slice(0, 20)) lines.push(`missing through the API: ${JSON.stringify(m)}`);
  for (const m of duplicates.slice(0, 20)) lines.push(`carried out twice: ${JSON.stringify(m)}`);
  const summary = {
    seconds: +duration.toFixed(1), rate: o.rate, workers: o.workers, seed: o.seed, requests: run.length, shed,
    status: byStatus(run), http500: failures.http500.length, untyped_errors: failures.untyped.length,
    wrong_answers: failures.wrong.length, hangs: failures.hangs.length,
    acked_writes: acks.length, acked_by_kind: ackKinds, acked_missing: missing.length, api_missing: apiMissing.length, duplicated_writes: duplicates.length,
    ok_ratio_outside: outS.okRatio, p50_outside_ms: outS.p50, p99_outside_ms: outS.p99, max_outside_ms: outS.max,
    ok_ratio_inside: inS.okRatio, p99_inside_ms: inS.p99, max_inside_ms: inS.max, p99_all_ms: all.p99,
    faults,
  };
  const problems = checkSummary(summary);
  lines.push(problems.length ? `FAILED: ${problems.join('; ')}` : 'all checks hold');
  lines.push(`SOAK_SUMMARY ${JSON.stringify({ ...summary, faults: faults.map((f) => ({ fault: f.fault, start_s: f.start_s, recovered_ms: f.recovered_ms, requests: f.requests, ok: f.ok, p99_ms: f.p99_ms, error: f.error })), problems })}`);
  summary.problems = problems;
  summary.lines = lines;
  summary.details = { http500: failures.http500, untyped: failures.untyped, wrong: failures.wrong, hangs: failures.hangs, missing, apiMissing, duplicates };
  return summary;
}

/// The log lines (every log of the stack) that mention a request id.
function logLinesFor(stack, rid) {
  if (!rid) return '';
  const found = [];
  const scan = (dir) => {
    let names = [];
    try { names = readdirSync(dir); } catch { return; }
    for (const n of names) {
      const f = join(dir, n);
      if (!n.endsWith('.log')) continue;
      try {
        for (const line of readFileSync(f, 'utf8').split('\n')) if (line.includes(rid)) found.push(`${n}: ${line.slice(0, 400)}`);
      } catch { /* unreadable */ }
    }
  };
  scan(stack.logs);
  scan(join(stack.home, 'nginx/logs'));
  return found.length ? `\n    ${found.slice(0, 8).join('\n    ')}` : '';
}

/// The checks the ctest version asserts: a list of what failed (empty when all hold).
export function checkSummary(s) {
  const p = [];
  if (s.http500 > LIMITS.maxHttp500) p.push(`${s.http500} answers with status 500`);
  if (s.acked_missing > LIMITS.maxAckedMissing) p.push(`${s.acked_missing} acknowledged writes missing on chain`);
  if (s.api_missing > 0) p.push(`${s.api_missing} acknowledged writes missing through the API`);
  if (s.duplicated_writes > 0) p.push(`${s.duplicated_writes} writes carried out twice`);
  if (s.wrong_answers > LIMITS.maxWrongAnswers) p.push(`${s.wrong_answers} wrong answers`);
  if (s.untyped_errors > LIMITS.maxUntypedErrors) p.push(`${s.untyped_errors} error answers without a typed JSON body`);
  if (s.hangs > LIMITS.maxHangs) p.push(`${s.hangs} requests hung`);
  if (!(s.ok_ratio_outside >= LIMITS.okRatioOutside)) p.push(`only ${s.ok_ratio_outside} of requests outside fault windows succeeded (want >= ${LIMITS.okRatioOutside})`);
  if (s.acked_writes === 0) p.push('no write was acknowledged');
  const seen = new Set(s.faults.map((f) => f.fault));
  for (const f of FAULTS) if (!seen.has(f)) p.push(`fault ${f} was not injected`);
  for (const f of s.faults) {
    if (f.error) p.push(`fault ${f.fault} at ${f.start_s} s could not be injected: ${f.error}`);
    if (f.recovered_ms === null) p.push(`no recovery after ${f.fault} at ${f.start_s} s`);
    if (f.zygote_back === false) p.push(`zygote_kill at ${f.start_s} s: the killed sandbox zygote was not replaced within 10 s`);
    if (f.graceful_lost) p.push(`${f.fault} at ${f.start_s} s: ${f.graceful_lost} runs in flight did not finish with 200`);
    if (f.fault === 'lying_gateway' && f.lying_typed !== f.lying_asked) {
      p.push(`lying gateway at ${f.start_s} s: ${f.lying_asked - f.lying_typed} of ${f.lying_asked} runs did not answer 502 ipfs_cid_mismatch`);
    }
  }
  return p;
}
const summaryOk = (s) => checkSummary(s).length === 0;

function parseArgs(argv) {
  const o = {};
  const names = { seconds: 'seconds', rate: 'rate', workers: 'workers', slot: 'slot', recovery: 'recovery', seed: 'seed',
    'max-inflight': 'maxInflight', warmup: 'warmup' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quiet') { o.quiet = true; continue; }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m || !names[m[1]]) throw new Error(`unknown argument ${a}`);
    const v = m[2] ?? argv[++i];
    if (v === undefined || !Number.isFinite(Number(v)) || Number(v) <= 0) throw new Error(`--${m[1]} needs a positive number`);
    o[names[m[1]]] = Number(v);
  }
  return o;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`soak: ${e.message}\nusage: node tests/soak/soak.mjs [--seconds 60] [--rate 10] [--workers 2] [--slot 8] [--recovery 3] [--seed N] [--max-inflight 24] [--quiet]`);
    process.exit(2);
  }
  // Stops by itself: a hard deadline well past the planned end.
  const hard = setTimeout(() => { console.error('soak: hard deadline passed; exiting'); process.exit(3); },
    ((opts.seconds ?? DEFAULTS.seconds) * 2 + 300) * 1000);
  hard.unref();
  // Interrupted: exit, so that stack.mjs's exit hook kills every process of the stack.
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { console.error(`soak: ${sig}`); process.exit(130); });
  runSoak(opts).then((s) => {
    process.exitCode = s.problems.length ? 1 : 0;
  }, (err) => {
    console.error(`soak: ${err.stack ?? err.message}`);
    process.exitCode = 1;
  });
}
