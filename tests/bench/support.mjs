// What the Node benchmarks share: command-line numbers and latency summaries.

/// The number after `--name` on the command line, else `fallback`.
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? Number(process.argv[i + 1]) : fallback;
}

/// The q-quantile (0..1) of ascending `sorted` values, the nearest-rank one; NaN when empty.
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/// Count, p50, p90, p99, max and mean of the latencies `ms`.
export function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), max: s[s.length - 1], mean };
}
