// A throw-away PostgreSQL server for the API tests (the JavaScript twin of tests/support/postgres_server.h):
// initdb into a temporary folder and postgres on a free loopback port, as the `postgres` system user when
// running as root (the server refuses root). Debian: package postgresql (scripts/setup).
//   const pg = await startPostgres();  pg.url (postgresql://postgres@127.0.0.1:PORT/postgres), pg.stop()
//   await pg.down(); await pg.up();     the server stopped (its data kept) and started again on the same port
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

function binDir() {
  if (process.env.SIGIL_POSTGRES_BINDIR) return process.env.SIGIL_POSTGRES_BINDIR;
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)) : [];
  versions.sort((a, b) => Number(a) - Number(b));
  for (const v of versions.reverse()) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir;
  }
  throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: run scripts/setup (package postgresql)');
}

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

export async function startPostgres() {
  const bin = binDir();
  const dir = mkdtempSync('/tmp/sigil-pg-');
  const asUser = process.getuid() === 0
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) }
    : {};
  if (asUser.uid !== undefined) chownSync(dir, asUser.uid, asUser.gid);
  const init = spawnSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8',
    '--locale=C', '--no-sync'], { ...asUser, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  let server = null;
  const up = async () => {
    server = spawn(join(bin, 'postgres'), ['-D', join(dir, 'data'), '-p', String(port), '-k', dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300'], { ...asUser, stdio: 'ignore' });
    const deadline = Date.now() + 60000;
    for (;;) {
      const ready = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres']);
      if (ready.status === 0) break;
      if (server.exitCode !== null || Date.now() > deadline) throw new Error('postgres did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const down = async () => {
    if (server === null || server.exitCode !== null) return;
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGINT');  // fast shutdown
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
  };
  await up();
  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    down,
    up,
    async stop() {
      if (stopped) return;
      stopped = true;
      await down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
