// Starts what the MCP clients talk to: a seeded decision database (seed_decisions) and the real
// `topofit extender` serving /mcp on its ops port behind an admin token. Paths from the environment CTest
// sets: TOPOFIT_BIN (build/cli/topofit) and TOPOFIT_SEED_BIN (build/tests/seed_decisions).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TOKEN = 'mcp-test-token';

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (CTest sets it)`);
  return value;
}

export const topofitBin = () => required('TOPOFIT_BIN');

// A scratch directory with the seeded database, the admin token and a kubeconfig the extender never
// dials (without --live-state it reads no cluster state; nothing here reaches an API server).
export function makeScratch() {
  const dir = mkdtempSync(join(tmpdir(), 'topofit-mcp-'));
  const db = join(dir, 'decisions.db');
  execFileSync(required('TOPOFIT_SEED_BIN'), [db]);
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, [
    'apiVersion: v1', 'kind: Config', 'current-context: none',
    'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]',
    'users: [{name: none, user: {token: unused}}]',
    'contexts: [{name: none, context: {cluster: none, user: none}}]', ''].join('\n'));
  return { dir, db, tokenFile, kubeconfig, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// `topofit extender` on loopback, ports chosen by the system; resolves with its ops URL once it listens
// (read from its `listening` log line).
export function startExtender(scratch) {
  const child = spawn(topofitBin(), [
    'extender', '--kubeconfig', scratch.kubeconfig, '--address', '127.0.0.1', '--port', '0',
    '--ops-address', '127.0.0.1', '--ops-port', '0', '--admin-token-file', scratch.tokenFile,
    '--decision-db', scratch.db, '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`extender did not listen:\n${log}`)); }, 15000);
    const onData = (chunk) => {
      log += chunk;
      const ops = /"ops":"127\.0\.0\.1:(\d+)"/.exec(log);
      if (ops) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${ops[1]}`,
          stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`extender exited ${code}:\n${log}`)); });
  });
}
