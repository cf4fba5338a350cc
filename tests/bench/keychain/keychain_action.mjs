// A keychain action of the kind the anchor publishes (issue 27): written here, bundled at benchmark
// and test time by esbuild from the pinned npm packages (zod, @noble/curves, @noble/hashes) into one
// ES2020 script of 400-500 KB, as the published bundles are built. Everything is derived from the
// params, so the same bundle gives the same answer in Node and in the sandbox (RFC 6979 signatures,
// an AES-GCM nonce taken from the message's hash): the test compares the two answers byte for byte.
//
// One run: validate the params (zod), derive an x25519 key pair and a peer's from seeds (HKDF-SHA256),
// agree on a shared secret both ways (ECDH), seal the message with AES-256-GCM under a key derived
// from it (WebCrypto) and open it again, sign the message's hash with secp256k1 and verify and recover,
// sign it with ed25519 and verify, and answer the hex of everything.
import { z } from 'zod';
import { x25519, ed25519 } from '@noble/curves/ed25519';
import { secp256k1, schnorr } from '@noble/curves/secp256k1';
import { p256 } from '@noble/curves/p256';
import { p384 } from '@noble/curves/p384';
import { p521 } from '@noble/curves/p521';
import { ed448 } from '@noble/curves/ed448';
import { sha256 } from '@noble/hashes/sha256';
import { keccak_256 } from '@noble/hashes/sha3';
import { hkdf } from '@noble/hashes/hkdf';
import { ripemd160 } from '@noble/hashes/ripemd160';
import { pbkdf2 } from '@noble/hashes/pbkdf2';
import { scrypt } from '@noble/hashes/scrypt';
import { blake2b } from '@noble/hashes/blake2b';
import { blake3 } from '@noble/hashes/blake3';
import { bytesToHex, hexToBytes, utf8ToBytes, concatBytes } from '@noble/hashes/utils';

const Hex32 = z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, 'a 32-byte hex string').transform((s) => s.replace(/^0x/, ''));
const Params = z.object({
  seed: Hex32,
  peerSeed: Hex32,
  message: z.string().min(1).max(4096),
  context: z.string().default('sigil keychain v1'),
  pkpId: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional(),
  rounds: z.number().int().min(1).max(16).default(1),
  curves: z.array(z.enum(['x25519', 'secp256k1', 'ed25519', 'p256', 'p384', 'p521', 'ed448'])).nonempty()
    .default(['x25519', 'secp256k1', 'ed25519']),
  // A password-wrapped export of the seed (a keystore), with a deliberately small work factor.
  exportWith: z.object({ password: z.string().min(8), kdf: z.enum(['pbkdf2', 'scrypt']), cost: z.number().int().min(1).max(64) })
    .optional(),
}).strict();

function derive(seedHex, label, context) {
  return hkdf(sha256, hexToBytes(seedHex), utf8ToBytes(context), utf8ToBytes(label), 32);
}

async function seal(keyBytes, nonce, plaintext) {
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce }, key, plaintext));
  const opened = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce }, key, sealed));
  return { sealed, opened };
}

function ethAddress(publicKeyUncompressed) {
  return '0x' + bytesToHex(keccak_256(publicKeyUncompressed.subarray(1)).subarray(12));
}

async function keychain(raw) {
  const parsed = Params.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
  }
  const p = parsed.data;
  const out = { ok: true, rounds: [] };
  const msg = utf8ToBytes(p.message);
  const digest = sha256(msg);
  for (let round = 0; round < p.rounds; round++) {
    const ctx = `${p.context}#${round}`;
    const r = {};
    if (p.curves.includes('x25519')) {
      const mine = derive(p.seed, 'x25519', ctx);
      const theirs = derive(p.peerSeed, 'x25519', ctx);
      const minePub = x25519.getPublicKey(mine);
      const theirsPub = x25519.getPublicKey(theirs);
      const shared = x25519.getSharedSecret(mine, theirsPub);
      const sharedBack = x25519.getSharedSecret(theirs, minePub);
      if (bytesToHex(shared) !== bytesToHex(sharedBack)) throw new Error('x25519: the two sides disagree');
      const aesKey = hkdf(sha256, shared, minePub, utf8ToBytes('aes-256-gcm'), 32);
      const { sealed, opened } = await seal(aesKey, digest.subarray(0, 12), msg);
      r.x25519 = { publicKey: bytesToHex(minePub), peerPublicKey: bytesToHex(theirsPub),
        sharedHash: bytesToHex(sha256(shared)), sealed: bytesToHex(sealed), opened: new TextDecoder().decode(opened) };
    }
    if (p.curves.includes('secp256k1')) {
      const priv = secp256k1.utils.normPrivateKeyToScalar(derive(p.seed, 'secp256k1', ctx)) % secp256k1.CURVE.n;
      const privBytes = hexToBytes(priv.toString(16).padStart(64, '0'));
      const pub = secp256k1.getPublicKey(privBytes, false);
      const sig = secp256k1.sign(digest, privBytes);
      const recovered = sig.recoverPublicKey(digest).toRawBytes(false);
      r.secp256k1 = { address: ethAddress(pub), signature: sig.toCompactHex(), recovery: sig.recovery,
        verified: secp256k1.verify(sig, digest, pub), recoveredMatches: bytesToHex(recovered) === bytesToHex(pub),
        hash160: bytesToHex(ripemd160(sha256(secp256k1.getPublicKey(privBytes, true)))),
        schnorr: bytesToHex(schnorr.sign(digest, privBytes, new Uint8Array(32))),
        sharedWithPeer: bytesToHex(sha256(secp256k1.getSharedSecret(privBytes,
          secp256k1.getPublicKey(derive(p.peerSeed, 'secp256k1', ctx), true)))) };
    }
    if (p.curves.includes('ed25519')) {
      const priv = derive(p.seed, 'ed25519', ctx);
      const pub = ed25519.getPublicKey(priv);
      const sig = ed25519.sign(msg, priv);
      r.ed25519 = { publicKey: bytesToHex(pub), signature: bytesToHex(sig), verified: ed25519.verify(sig, msg, pub) };
    }
    if (p.curves.includes('p256')) {
      const priv = derive(p.seed, 'p256', ctx);
      const pub = p256.getPublicKey(priv, true);
      const sig = p256.sign(digest, priv);
      r.p256 = { publicKey: bytesToHex(pub), signature: sig.toCompactHex(), verified: p256.verify(sig, digest, pub) };
    }
    for (const [name, curve] of [['p384', p384], ['p521', p521]]) {
      if (!p.curves.includes(name)) continue;
      const wide = BigInt('0x' + bytesToHex(concatBytes(derive(p.seed, name, ctx), derive(p.seed, name + '+', ctx))));
      const priv = wide % (curve.CURVE.n - 1n) + 1n;
      const sig = curve.sign(digest, priv);
      r[name] = { signature: sig.toCompactHex(), verified: curve.verify(sig, digest, curve.getPublicKey(priv)) };
    }
    if (p.curves.includes('ed448')) {
      const priv = concatBytes(derive(p.seed, 'ed448', ctx), derive(p.seed, 'ed448+', ctx)).subarray(0, 57);
      const sig = ed448.sign(msg, priv);
      r.ed448 = { signature: bytesToHex(sig), verified: ed448.verify(sig, msg, ed448.getPublicKey(priv)) };
    }
    out.rounds.push(r);
  }
  if (p.exportWith) {
    const salt = blake2b(hexToBytes(p.seed), { dkLen: 16 });
    const password = utf8ToBytes(p.exportWith.password);
    const wrapKey = p.exportWith.kdf === 'pbkdf2'
      ? pbkdf2(sha256, password, salt, { c: p.exportWith.cost * 16, dkLen: 32 })
      : scrypt(password, salt, { N: 16 * p.exportWith.cost, r: 8, p: 1, dkLen: 32 });
    const { sealed } = await seal(wrapKey, salt.subarray(0, 12), hexToBytes(p.seed));
    out.keystore = { kdf: p.exportWith.kdf, salt: bytesToHex(salt), sealed: bytesToHex(sealed), id: bytesToHex(blake3(sealed)) };
  }
  out.fingerprint = bytesToHex(sha256(concatBytes(...out.rounds.map((r) => utf8ToBytes(JSON.stringify(r))))));
  return out;
}

export async function main(params) {
  return keychain(params);
}
