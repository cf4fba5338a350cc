// The 60-second soak-and-fault test under ctest (label "soak"; soak.mjs has the workload, the faults
// and the checks; `node tests/soak/soak.mjs --seconds 600` is the 10-minute version by hand).
// Asserts: no 500, no acknowledged write missing on chain or through the API, no wrong answer, no
// hang, every fault injected and recovered from, and requests outside fault windows succeed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak, checkSummary } from './soak.mjs';

const seconds = Number(process.env.SIGIL_SOAK_SECONDS ?? 60);

test(`soak with faults for ${seconds} s: no 500, every acknowledged write on chain`, { timeout: (seconds + 200) * 1000 }, async () => {
  const s = await runSoak({ seconds });
  assert.ok(s, 'the soak produced a summary');
  assert.equal(s.http500, 0, `500s: ${JSON.stringify(s.details.http500, null, 1)}`);
  assert.equal(s.acked_missing, 0, `acknowledged writes missing on chain: ${JSON.stringify(s.details.missing.slice(0, 20), null, 1)}`);
  assert.equal(s.api_missing, 0, `acknowledged writes missing through the API: ${JSON.stringify(s.details.apiMissing.slice(0, 20), null, 1)}`);
  assert.deepEqual(checkSummary(s), [], 'every check of the soak holds');
});
