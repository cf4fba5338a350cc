// The build's textual patches of pinned npm files (ethers_lower.mjs, buble_patch.mjs): each must
// match exactly once, so a new version of the package fails the build here rather than loading
// unpatched.

/// `text` with `from` replaced by `to`; exits the build naming `tool`, `why` and `input` when
/// `from` does not occur exactly once.
export function patchOnce(text, from, to, why, tool, input) {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) {
    console.error(`${tool}: patch "${why}" does not match ${input} exactly once`);
    process.exit(1);
  }
  return text.slice(0, at) + to + text.slice(at + from.length);
}
