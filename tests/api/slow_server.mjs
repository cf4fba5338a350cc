// A slow HTTP server for tests and benchmarks (not a test): it answers every request after a delay,
// as a price feed, an RPC node or an API that takes a while does, so an action that awaits a fetch of
// it waits that long. It runs in a child Node process, so a benchmark's own event loop (hundreds of
// HTTPS requests in flight) never delays its answers, and its answers never delay the benchmark.
//
//   const slow = await startSlowServer({ delayMs: 200 });
//   slow.url        http://127.0.0.1:PORT/ (any path; `?ms=N` overrides the delay for one request)
//   await slow.count()   requests answered so far
//   await slow.peak()    most requests it held at once since the last peak() (which resets it)
//   await slow.stop()
// The body is the text `slow <delay>`. Actions reach it only with [actions] fetch_allowed_addresses =
// 127.0.0.1 (the fetch policy refuses loopback otherwise).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import http from 'node:http';

const CHILD_FLAG = '--sigil-slow-server';

if (process.argv[2] === CHILD_FLAG) {
  // The child: serve until stdin closes (the parent exited or called stop()).
  const delayMs = Number(process.argv[3]);
  let answered = 0;
  let holding = 0;
  let peak = 0;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/count') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(String(answered));
      return;
    }
    if (u.pathname === '/peak') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(String(peak));
      peak = holding;
      return;
    }
    const ms = u.searchParams.has('ms') ? Number(u.searchParams.get('ms')) : delayMs;
    holding++;
    peak = Math.max(peak, holding);
    setTimeout(() => {
      holding--;
      answered++;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`slow ${ms}`);
    }, ms);
  });
  server.keepAliveTimeout = 30000;
  server.maxConnections = 4096;
  server.listen(0, '127.0.0.1', 4096, () => process.stdout.write(`${server.address().port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

/// Starts the server in a child process; resolves once it listens.
export function startSlowServer({ delayMs = 200 } = {}) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), CHILD_FLAG, String(delayMs)],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const kill = () => { try { child.kill('SIGKILL'); } catch { /* gone */ } };
  process.on('exit', kill);
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the slow server exited (${code}) before listening`)));
    child.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('\n')) return;
      const port = Number(out.trim());
      const url = `http://127.0.0.1:${port}/`;
      resolve({
        url,
        delayMs,
        pid: child.pid,
        count: async () => Number(await (await fetch(`${url}count`)).text()),
        peak: async () => Number(await (await fetch(`${url}peak`)).text()),
        stop: () => new Promise((r) => {
          process.removeListener('exit', kill);
          if (child.exitCode !== null || child.signalCode !== null) { r(); return; }
          child.once('exit', () => r());
          child.stdin.end();
          setTimeout(kill, 2000).unref();
        }),
      });
    });
  });
}
