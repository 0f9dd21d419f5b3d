// The official MCP conformance suite's server scenarios (@modelcontextprotocol/conformance) against
// /mcp on a real `topofit extender`, at one protocol revision: `node conformance.mjs REVISION`, 2025-11-25
// (the initialize handshake) or 2026-07-28 (stateless: server/discover, the revision in every request's
// _meta). Each runs every server scenario the suite has for that revision (`--spec-version REVISION
// --suite all`: the active ones and those the suite still calls pending or draft) on that revision's wire;
// a scenario that applies to both runs twice, once on each. The suite sends no credentials, so a
// pass-through proxy on loopback adds the admin token to every request and changes nothing else (Host and
// Origin reach topofit as the suite sent them, which the DNS-rebinding scenario relies on). Scenarios or
// checks topofit does not pass are listed, with why, in expected-failures-REVISION.yml; the suite fails on
// any other failure and on a listed one that passes.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKEN, makeScratch, startExtender } from './topofit.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function startProxy(target) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${TOKEN}` };
    const forward = http.request({
      hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers,
    }, (reply) => {
      res.writeHead(reply.statusCode, reply.headers);
      reply.pipe(res);
    });
    forward.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
    req.pipe(forward);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const revision = process.argv[2];
if (!['2025-11-25', '2026-07-28'].includes(revision)) {
  console.error('usage: node conformance.mjs 2025-11-25|2026-07-28');
  process.exit(2);
}
const scratch = makeScratch();
let extender;
let proxy;
let code = 1;
try {
  extender = await startExtender(scratch);
  proxy = await startProxy(extender.url);
  const url = `http://127.0.0.1:${proxy.address().port}/mcp`;
  const suite = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const results = mkdtempSync(join(tmpdir(), `topofit-conformance-${revision}-`));
  const run = spawn(process.execPath, [suite, 'server', '--url', url, '--spec-version', revision, '--suite', 'all',
    '--expected-failures', join(here, `expected-failures-${revision}.yml`), '-o', results],
  { stdio: 'inherit', cwd: here });
  code = await new Promise((resolve) => run.once('exit', (c) => resolve(c ?? 1)));
  console.log(`conformance results: ${results}`);
} catch (e) {
  console.error(e);
} finally {
  proxy?.close();
  await extender?.stop();
  scratch.remove();
}
process.exit(code);
