// The diagnosis benchmark (docs/mcp.md): every fault diagnosis_faults made (tests/diagnosis/inject_faults.cc)
// is asked of `topofit mcp` over stdio by the official SDK's client, from the tools' output alone: the
// injected cause must be the first cause of the answer (diagnose_pod's `cause`), and the answer, as the
// model reads it (the text content), under 2 KB. Prints one line per fault and the score; exits 1 below
// 100% or over 2 KB.
//   node diagnosis.mjs            (TOPOFIT_BIN and TOPOFIT_FAULTS_BIN from CTest, or scripts/diagnosis-bench.sh)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAX_ANSWER_BYTES = 2048;

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (CTest and scripts/diagnosis-bench.sh set it)`);
  return value;
}

const dir = mkdtempSync(join(tmpdir(), 'topofit-diagnosis-'));
try {
  execFileSync(required('TOPOFIT_FAULTS_BIN'), [dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const faults = JSON.parse(readFileSync(join(dir, 'faults.json'), 'utf8'));
  const client = new Client({ name: 'topofit-diagnosis-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: required('TOPOFIT_BIN'), args: ['mcp', '--db', join(dir, 'decisions.db')], stderr: 'inherit' }));
  let named = 0;
  let largest = 0;
  const wrong = [];
  for (const fault of faults) {
    const answer = await client.callTool({ name: 'diagnose_pod', arguments: { pod: fault.pod } });
    const text = answer.content.map((c) => c.text ?? '').join('\n');
    const bytes = Buffer.byteLength(text, 'utf8');
    largest = Math.max(largest, bytes);
    const cause = answer.isError ? `error: ${text}` : answer.structuredContent.cause;
    const ok = cause === fault.expected && bytes < MAX_ANSWER_BYTES;
    if (ok) named += 1; else wrong.push(fault.id);
    console.log(`${ok ? 'ok  ' : 'MISS'} ${String(fault.id).padStart(2)} ${fault.pod.padEnd(34)} expected ${fault.expected.padEnd(20)} ` +
                `answered ${String(cause).padEnd(20)} ${bytes} B  (${fault.fault})`);
  }
  await client.close();
  const score = (100 * named) / faults.length;
  console.log(`diagnosis score: ${named} of ${faults.length} faults named first (${score.toFixed(1)}%), ` +
              `largest answer ${largest} bytes (limit ${MAX_ANSWER_BYTES})`);
  if (named !== faults.length) {
    console.error(`missed: ${wrong.join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
