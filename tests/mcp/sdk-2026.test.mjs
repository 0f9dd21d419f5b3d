// The official TypeScript SDK's 2026 client (@modelcontextprotocol/client, the SDK's second major version)
// against topofit's MCP server on revision 2026-07-28, the stateless one: no initialize, server/discover,
// the revision and the client's capabilities in every request's _meta; over stdio (`topofit mcp --db`) and
// Streamable HTTP (/mcp on the extender's ops port), on the seeded history (seed_decisions.cc). Pinned to
// 2026-07-28, and in 'auto' mode, where the client probes with server/discover and falls back to the 2025
// handshake on any answer that is not a 2026 one: it must stay on 2026. In its default ('legacy') mode the
// same client speaks 2025-11-25, which topofit serves beside it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { TOKEN, makeScratch, startExtender, topofitBin } from './topofit.mjs';

let scratch;
let extender;
before(async () => {
  scratch = makeScratch();
  extender = await startExtender(scratch);
});
after(async () => {
  await extender?.stop();
  scratch?.remove();
});

const transports = {
  stdio: () => new StdioClientTransport({ command: topofitBin(), args: ['mcp', '--db', scratch.db], stderr: 'pipe' }),
  http: () => new StreamableHTTPClientTransport(new URL(`${extender.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  }),
};

async function connect(transport, mode) {
  const client = new Client({ name: 'topofit-sdk-2026-test', version: '1.0.0' },
    mode ? { versionNegotiation: { mode } } : {});
  await client.connect(transport);
  return client;
}

for (const [name, transport] of Object.entries(transports)) {
  test(`${name}: a client pinned to 2026-07-28 discovers topofit and reads its history statelessly`, async () => {
    const client = await connect(transport(), { pin: '2026-07-28' });
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const discovered = client.getDiscoverResult();
      assert.deepEqual(discovered.supportedVersions, ['2026-07-28']);
      assert.deepEqual(Object.keys(discovered.capabilities).sort(), ['prompts', 'resources', 'tools']);
      assert.match(discovered.instructions, /explain_pending_pod/);
      assert.equal(client.getServerVersion()?.name, 'topofit');

      const { tools } = await client.listTools();
      assert.equal(tools.length, name === 'http' ? 10 : 8);
      const pod = await client.callTool({ name: 'explain_pending_pod', arguments: { pod: 'ml/train-7' } });
      assert.ok(!pod.isError, JSON.stringify(pod));
      assert.equal(pod.structuredContent.correlationId, 'uid-train-7');
      const bad = await client.callTool({ name: 'list_decisions', arguments: { limit: 'ten' } });
      assert.equal(bad.isError, true);
      await assert.rejects(client.callTool({ name: 'delete_everything', arguments: {} }), (e) => e.code === -32602);

      const recent = await client.readResource({ uri: 'topofit://decisions' });
      assert.equal(JSON.parse(recent.contents[0].text).decisions.length, 9);
      // 2026-07-28 has no -32002: a resource that does not exist is invalid params.
      await assert.rejects(client.readResource({ uri: 'topofit://nothing' }),
        (e) => e.code === -32602 && e.data.uri === 'topofit://nothing');
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.equal(resourceTemplates.length, name === 'http' ? 4 : 2);
      const prompt = await client.getPrompt({ name: 'diagnose-pending-gpu-pod', arguments: { pod: 'ml/train-7' } });
      assert.match(prompt.messages[0].content.text, /explain_pending_pod with pod "ml\/train-7"/);
    } finally {
      await client.close();
    }
  });

  test(`${name}: a dual-era client in auto mode stays on 2026-07-28`, async () => {
    const client = await connect(transport(), 'auto');
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal((await client.callTool({ name: 'list_idle_gpus', arguments: {} })).isError, undefined);
    } finally {
      await client.close();
    }
  });

  test(`${name}: the same client in its default mode speaks 2025-11-25, served beside 2026`, async () => {
    const client = await connect(transport());
    try {
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
      await client.ping();
      // The wire has 2025's -32002 (sdk.test.mjs checks it); this SDK reads any resource-not-found error with
      // the uri in its data as its ResourceNotFoundError.
      await assert.rejects(client.readResource({ uri: 'topofit://nothing' }), (e) => e.uri === 'topofit://nothing');
    } finally {
      await client.close();
    }
  });
}

test('http: what a 2026 request gets on the wire', async () => {
  const url = `${extender.url}/mcp`;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const post = (method, params, headers = {}) => fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${TOKEN}`, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method, params }),
  });
  const listed = await post('tools/list', { _meta: meta });
  assert.equal(listed.status, 200);
  const { result } = await listed.json();
  assert.equal(result.resultType, 'complete');
  assert.equal(result.cacheScope, 'private');
  assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0);
  assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'topofit');
  assert.equal(listed.headers.get('mcp-session-id'), null);  // no sessions

  const unsupported = await post('tools/list', { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } },
    { 'MCP-Protocol-Version': '2030-01-01' });
  assert.equal(unsupported.status, 400);
  assert.deepEqual(await unsupported.json(), {
    jsonrpc: '2.0', id: 5,
    error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: '2030-01-01' } },
  });
  const mismatch = await post('tools/list', { _meta: meta }, { 'Mcp-Method': 'tools/call' });
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  const removed = await post('initialize', { _meta: meta, protocolVersion: '2026-07-28' });
  assert.equal(removed.status, 404);
  assert.equal((await removed.json()).error.code, -32601);
  assert.equal((await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 405);  // no GET stream
});
