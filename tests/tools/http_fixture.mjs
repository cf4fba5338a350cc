// Loopback HTTP server for the action fetch tests (node:http only, no npm packages).
// Listens on 127.0.0.1 and a free port (or the port given as argv[2]), prints the port on stdout,
// and exits when stdin closes, so the test that started it never leaves it behind.
//
// Routes:
//   /hello                 200 "hello", plus X-Fixture-Reply: yes (mixed-case name on purpose)
//   /echo                  200 JSON {method, url, headers, body} of the request as received
//   /big?bytes=N           200 with N bytes of 'a' (Content-Length set)
//   /stream?bytes=N        200 with N bytes of 'b', chunked (no Content-Length)
//   /slow?ms=N             waits N ms, then 200 "slow"
//   /redirect?to=URL&code=C  C (default 302) to URL
//   /loop?n=N              redirects to /loop?n=N-1; at 0 answers 200 "end of loop"
//   /status?code=N         status N with body "status N" (none for 204/304)
//   /gzip?bytes=N          N bytes of 'z', gzip-encoded
//   /headers?count=N&size=M  200 with N headers X-Big-<i> of M bytes each
import http from 'node:http';
import zlib from 'node:zlib';

function send(res, status, body, headers = {}) {
  res.writeHead(status, headers);
  res.end(body);
}

function handle(req, res, body) {
  const url = new URL(req.url, 'http://fixture');
  const q = (name, dflt) => (url.searchParams.has(name) ? Number(url.searchParams.get(name)) : dflt);
  switch (url.pathname) {
    case '/hello':
      res.setHeader('X-Fixture-Reply', 'yes');
      return send(res, 200, 'hello', { 'Content-Type': 'text/plain' });
    case '/echo':
      return send(res, 200, JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }),
                  { 'Content-Type': 'application/json' });
    case '/big':
      return send(res, 200, Buffer.alloc(q('bytes', 0), 'a'));
    case '/stream': {
      let left = q('bytes', 0);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16384, 'b');
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!res.write(chunk.subarray(0, n))) return res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    case '/slow': {
      const timer = setTimeout(() => send(res, 200, 'slow'), q('ms', 1000));
      res.on('close', () => clearTimeout(timer));
      return;
    }
    case '/redirect':
      return send(res, q('code', 302), '', { Location: url.searchParams.get('to') ?? '/hello' });
    case '/loop': {
      const n = q('n', 0);
      if (n <= 0) return send(res, 200, 'end of loop');
      return send(res, 302, '', { Location: `/loop?n=${n - 1}` });
    }
    case '/status': {
      const code = q('code', 200);
      return send(res, code, code === 204 || code === 304 ? undefined : `status ${code}`);
    }
    case '/gzip':
      return send(res, 200, zlib.gzipSync(Buffer.alloc(q('bytes', 0), 'z')),
                  { 'Content-Encoding': 'gzip', 'Content-Type': 'text/plain' });
    case '/headers': {
      const value = 'h'.repeat(q('size', 100));
      for (let i = 0; i < q('count', 1); ++i) res.setHeader(`X-Big-${i}`, value);
      return send(res, 200, 'headers');
    }
    default:
      return send(res, 404, 'no such route');
  }
}

const server = http.createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.keepAliveTimeout = 1000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
