// A second SQLite connection for the tests that a locked database must not stall (run history).
import { spawn } from 'node:child_process';

// Holds the SQLite database's write lock (BEGIN EXCLUSIVE) until release() is called.
export async function lockDatabase(db) {
  const locker = spawn('python3', ['-c', [
    'import sqlite3, sys',
    `c = sqlite3.connect(${JSON.stringify(db)}, isolation_level=None)`,
    'c.execute("BEGIN EXCLUSIVE")',
    'print("locked", flush=True)',
    'sys.stdin.read()',
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((res, rej) => {
    locker.stdout.once('data', res);
    locker.once('exit', (code) => rej(new Error(`the locker exited ${code}`)));
  });
  return async () => {
    locker.stdin.end();
    await new Promise((res) => (locker.exitCode !== null ? res() : locker.once('exit', res)));
  };
}
