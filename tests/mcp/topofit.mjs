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

// `topofit extender` on loopback, ports chosen by the system; resolves with its ops and verbs URLs once it
// listens (read from its `listening` log line).
// With `db` null its decision history is in memory (a test that makes it decide leaves the seeded file as
// it was: a write would also apply the store's retention to the seed's old records).
export function startExtender(scratch, db = scratch.db) {
  const child = spawn(topofitBin(), [
    'extender', '--kubeconfig', scratch.kubeconfig, '--address', '127.0.0.1', '--port', '0',
    '--ops-address', '127.0.0.1', '--ops-port', '0', '--admin-token-file', scratch.tokenFile,
    ...(db ? ['--decision-db', db] : []), '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`extender did not listen:\n${log}`)); }, 15000);
    const onData = (chunk) => {
      log += chunk;
      const ops = /"ops":"127\.0\.0\.1:(\d+)"/.exec(log);
      const api = /"extender":"127\.0\.0\.1:(\d+)"/.exec(log);
      if (ops && api) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${ops[1]}`,
          apiUrl: `http://127.0.0.1:${api[1]}`,
          stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`extender exited ${code}:\n${log}`)); });
  });
}

// A GPU node as the API server would send it in a filter request: a catalog shape by its instance type, in a
// node group (EKS's label).
export function gpuNode(name, instanceType, group) {
  return {
    metadata: {
      name, resourceVersion: '1',
      labels: { 'node.kubernetes.io/instance-type': instanceType, 'eks.amazonaws.com/nodegroup': group },
    },
    status: { allocatable: { 'nvidia.com/gpu': '8' }, capacity: { 'nvidia.com/gpu': '8' } },
  };
}

// A pod asking `gpus` GPUs, NVLink required when `nvRequired`.
export function gpuPod(name, gpus, nvRequired) {
  const annotations = nvRequired ? { 'topofit.io/min-link': 'NV', 'topofit.io/topology-policy': 'required' } : {};
  return {
    metadata: { name, namespace: 'ml', uid: `uid-${name}`, annotations },
    spec: {
      schedulerName: 'topofit',
      containers: [{ name: 'main', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }],
    },
  };
}

// Feeds the extender's live state the way kube-scheduler does, through its filter verb: the nodes become its
// GPU state, and a pod no node fits becomes a preference in its ledger. Resolves with the filter's reply.
export async function filter(extender, pod, nodes) {
  const reply = await fetch(`${extender.apiUrl}/filter`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ Pod: pod, Nodes: { items: nodes }, NodeNames: null }),
  });
  if (reply.status !== 200) throw new Error(`filter: ${reply.status} ${await reply.text()}`);
  return reply.json();
}
