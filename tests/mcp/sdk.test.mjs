// The official TypeScript SDK's client (@modelcontextprotocol/sdk) against topofit's MCP server, over
// stdio (`topofit mcp --db`) and Streamable HTTP (/mcp on the extender's ops port), on a seeded history
// (seed_decisions.cc): it lists the tools and calls each one, checking the structured content (which the
// SDK also validates against each tool's outputSchema), the resources and the prompt. Over HTTP the
// extender also has a live GPU state and ledger, fed through its filter verb: get_topology and get_ledger.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOKEN, filter, gpuNode, gpuPod, makeScratch, startExtender, topofitBin } from './topofit.mjs';

const HISTORY_TOOLS = ['diagnose_pod', 'explain_pending_pod', 'explain_scale_up', 'list_idle_gpus', 'explain_restart',
  'explain_headroom', 'list_decisions', 'get_decision'];
// Only where the live state is: /mcp of a running extender.
const LIVE_TOOLS = ['get_topology', 'get_ledger'];

let scratch;
let extender;  // on the seeded history
let live;  // another, fed a GPU state and ledger, its history in memory
before(async () => {
  scratch = makeScratch();
  extender = await startExtender(scratch);
  live = await startExtender(scratch, null);
  // ml/trainer needs 4 NVLink GPUs, which the PCIe-only g5 cannot give: refused, it becomes a preference.
  const refused = await filter(live, gpuPod('trainer', 4, true), [gpuNode('g5-1', 'g5.48xlarge', 'g5-group')]);
  assert.ok(refused.FailedAndUnresolvableNodes['g5-1'], JSON.stringify(refused));
  const fits = await filter(live, gpuPod('infer', 1, false), [gpuNode('p4d-1', 'p4d.24xlarge', 'p4d-a')]);
  assert.deepEqual(fits.Nodes.items.map((n) => n.metadata.name), ['p4d-1']);
});
after(async () => {
  await extender?.stop();
  await live?.stop();
  scratch?.remove();
});

// TOPOFIT_MCP_RECORD=DIR: every message the SDK client sends is also written to DIR, one file each named by
// its SHA-1 (as libFuzzer names its corpus): the MCP fuzz harness's seeds (tests/data/fuzz/mcp).
function record(transport) {
  const dir = process.env.TOPOFIT_MCP_RECORD;
  if (!dir) return;
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const text = JSON.stringify(message);
    writeFileSync(join(dir, createHash('sha1').update(text).digest('hex')), text);
    return send(message, options);
  };
}

async function connect(transport) {
  record(transport);
  const client = new Client({ name: 'topofit-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const transports = {
  stdio: () => new StdioClientTransport({ command: topofitBin(), args: ['mcp', '--db', scratch.db], stderr: 'pipe' }),
  http: (server = extender) => new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  }),
};

for (const [name, transport] of Object.entries(transports)) {
  test(`${name}: every tool answers with structured content from the seeded history`, async () => {
    const client = await connect(transport());
    try {
      assert.equal(client.getServerVersion().name, 'topofit');
      const { tools } = await client.listTools();
      const expected = name === 'http' ? [...HISTORY_TOOLS, ...LIVE_TOOLS] : HISTORY_TOOLS;
      assert.deepEqual(tools.map((t) => t.name).sort(), [...expected].sort());
      for (const tool of tools) {
        assert.equal(tool.annotations.readOnlyHint, true, tool.name);
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.outputSchema.type, 'object', tool.name);
      }

      const pod = await client.callTool({ name: 'explain_pending_pod', arguments: { pod: 'ml/train-7' } });
      assert.ok(!pod.isError, JSON.stringify(pod));
      assert.equal(pod.structuredContent.pod, 'ml/train-7');
      assert.equal(pod.structuredContent.correlationId, 'uid-train-7');
      assert.deepEqual(pod.structuredContent.decisions.map((d) => d.kind),
        ['intent', 'ranking', 'capacity-requested', 'preference', 'filter']);
      assert.match(pod.structuredContent.text, /^ml\/train-7 pending/);
      assert.match(pod.structuredContent.text, /h100-3: needs links of NV or better, best reachable is SYS/);
      assert.deepEqual(JSON.parse(pod.content[0].text), pod.structuredContent);

      const group = await client.callTool({ name: 'explain_scale_up', arguments: { group: 'p5-a' } });
      assert.equal(group.structuredContent.group, 'p5-a');
      // The group's rankings first (read apart from its other records), then the rest.
      assert.deepEqual(group.structuredContent.decisions.map((d) => d.kind), ['ranking', 'intent']);
      assert.match(group.structuredContent.text, /g5-group refused: its new nodes would not take 1 GPU pod/);

      const idle = await client.callTool({ name: 'list_idle_gpus', arguments: {} });
      assert.deepEqual(idle.structuredContent.decisions.map((d) => [d.node, d.reason, d.gpus]),
        [['g5-2', 'awaiting-scale-down', 8], ['h100-3', 'fragmented', 4]]);
      assert.match(idle.structuredContent.text, /^12 idle GPUs on 2 node\(s\)/);
      const oneNode = await client.callTool({ name: 'list_idle_gpus', arguments: { node: 'h100-3' } });
      assert.match(oneNode.structuredContent.text, /h100-3 \(p5-b\): 4 free GPUs \(1,2,5,6\): 4 fragmented/);

      const restart = await client.callTool({ name: 'explain_restart', arguments: { pod: 'ml/infer-1' } });
      assert.ok(!restart.isError, JSON.stringify(restart));
      assert.deepEqual(restart.structuredContent.decisions.map((d) => [d.kind, d.reason]),
        [['restart', 'gpu-fault'], ['bind', 'bound']]);
      assert.match(restart.structuredContent.text, /Xid 79/);

      const first = await client.callTool({ name: 'list_decisions', arguments: { limit: 3 } });
      assert.equal(first.structuredContent.decisions.length, 3);
      assert.ok(first.structuredContent.nextCursor);
      const second = await client.callTool({
        name: 'list_decisions', arguments: { limit: 100, cursor: first.structuredContent.nextCursor },
      });
      assert.equal(second.structuredContent.decisions.length, 6);  // 9 seeded
      assert.equal(second.structuredContent.nextCursor, undefined);
      const ids = [...first.structuredContent.decisions, ...second.structuredContent.decisions].map((d) => d.id);
      assert.deepEqual(ids, [...ids].sort((a, b) => b - a));
      assert.equal(new Set(ids).size, 9);
      const binds = await client.callTool({ name: 'list_decisions', arguments: { kind: 'bind', pod: 'ml/infer-1' } });
      assert.deepEqual(binds.structuredContent.decisions.map((d) => d.node), ['g5-1']);

      const one = await client.callTool({ name: 'get_decision', arguments: { id: ids[4] } });
      assert.equal(one.structuredContent.decision.id, ids[4]);

      // Bad arguments are tool errors the model can read; an unknown tool is a protocol error.
      for (const args of [{ limit: 'ten' }, { limit: 1000000 }, { cursor: 'not-a-cursor' }, { kind: 'nope' }, { color: 1 }]) {
        const bad = await client.callTool({ name: 'list_decisions', arguments: args });
        assert.equal(bad.isError, true, JSON.stringify(args));
      }
      await assert.rejects(client.callTool({ name: 'delete_everything', arguments: {} }),
        (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams);

      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ['topofit://decisions', 'topofit://idle-gpus']);
      const recent = await client.readResource({ uri: 'topofit://decisions' });
      assert.equal(JSON.parse(recent.contents[0].text).decisions.length, 9);
      const story = await client.readResource({ uri: 'topofit://pods/ml/train-7' });
      assert.equal(JSON.parse(story.contents[0].text).correlationId, 'uid-train-7');
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.equal(resourceTemplates.length, name === 'http' ? 4 : 2);
      await assert.rejects(client.readResource({ uri: 'topofit://nothing' }), (e) => e.code === -32002);

      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name), ['diagnose-pending-gpu-pod']);
      const prompt = await client.getPrompt({ name: 'diagnose-pending-gpu-pod', arguments: { pod: 'ml/train-7' } });
      assert.match(prompt.messages[0].content.text, /explain_pending_pod with pod "ml\/train-7"/);
      await client.ping();
    } finally {
      await client.close();
    }
  });
}

test('http: get_topology and get_ledger answer from the live GPU state and ledger', async () => {
  const client = await connect(transports.http(live));
  try {
    const node = await client.callTool({ name: 'get_topology', arguments: { node: 'p4d-1' } });
    assert.ok(!node.isError, JSON.stringify(node));
    const [p4d] = node.structuredContent.nodes;
    assert.equal(p4d.node, 'p4d-1');
    assert.equal(p4d.nodeGroup, 'p4d-a');
    assert.deepEqual(p4d.source, {
      origin: 'catalog:dgx-a100', model: 'catalog:dgx-a100',
      reason: 'instance type p4d.24xlarge is catalog shape dgx-a100', warnings: [],
    });
    assert.equal(p4d.topology.gpus.length, 8);
    assert.deepEqual(p4d.nvlinkIslands, [[0, 1, 2, 3, 4, 5, 6, 7]]);
    assert.equal(p4d.weakestLink, 'NV');
    assert.equal(p4d.gpus.free.length, 8);  // filter places nothing; bind would
    assert.deepEqual(JSON.parse(node.content[0].text), node.structuredContent);

    const group = await client.callTool({ name: 'get_topology', arguments: { group: 'g5-group' } });
    assert.deepEqual(group.structuredContent.nodes.map((n) => [n.node, n.source.origin, n.weakestLink]),
      [['g5-1', 'catalog:g5.48xlarge', 'SYS']]);
    const resource = await client.readResource({ uri: 'topofit://topology/node/g5-1' });
    assert.equal(JSON.parse(resource.contents[0].text).nodes[0].node, 'g5-1');

    // Unknown names and bad arguments are tool errors; the server goes on answering.
    const unknown = await client.callTool({ name: 'get_topology', arguments: { node: 'h100-9' } });
    assert.equal(unknown.isError, true);
    assert.match(unknown.content[0].text, /no node 'h100-9' in the GPU state/);
    for (const args of [{}, { node: 'p4d-1', group: 'p4d-a' }, { group: 'p4d-a', cursor: 'x' }, { node: 3 }]) {
      assert.equal((await client.callTool({ name: 'get_topology', arguments: args })).isError, true, JSON.stringify(args));
    }
    await assert.rejects(client.readResource({ uri: 'topofit://topology/node/h100-9' }), (e) => e.code === -32002);

    const ledger = await client.callTool({ name: 'get_ledger', arguments: {} });
    assert.ok(!ledger.isError, JSON.stringify(ledger));
    assert.deepEqual(ledger.structuredContent.preferences.map((p) => [p.pod, p.uid, p.gpus, p.minLink]),
      [['ml/trainer', 'uid-trainer', 4, 'NV']]);
    assert.deepEqual(ledger.structuredContent.intents, []);  // intents come from the expander (topofit serve)
    assert.deepEqual(ledger.structuredContent.total, { preferences: 1, intents: 0, holds: 0, nodeGroups: 0 });
    const bad = await client.callTool({ name: 'get_ledger', arguments: { cursor: 'ledger-offset:99' } });
    assert.equal(bad.isError, true);
  } finally {
    await client.close();
  }
});

test('stdio: the live tools are not there without a running extender, and the error says where they are', async () => {
  const client = await connect(transports.stdio());
  try {
    await assert.rejects(client.callTool({ name: 'get_topology', arguments: { node: 'p4d-1' } }),
      (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams &&
        /served on \/mcp of a running topofit extender/.test(e.message));
  } finally {
    await client.close();
  }
});

test('http: the transport refuses what the spec says to refuse, and goes on serving', async () => {
  const url = `${extender.url}/mcp`;
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const post = (headers, body = ping) => fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const auth = { Authorization: `Bearer ${TOKEN}` };
  assert.equal((await post({})).status, 401);
  assert.equal((await post({ Authorization: 'Bearer wrong' })).status, 401);
  assert.equal((await post({ ...auth, Origin: 'http://evil.example.com' })).status, 403);
  assert.equal((await post({ ...auth, 'MCP-Protocol-Version': '1999-01-01' })).status, 400);
  const garbage = await post(auth, '{"jsonrpc": "2.0", "id": 1, "method": ');
  assert.equal(garbage.status, 400);
  assert.equal((await garbage.json()).error.code, -32700);
  const batch = await post(auth, `[${ping}]`);
  assert.equal((await batch.json()).error.code, -32600);
  const unknown = await post(auth, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/delete' }));
  assert.equal((await unknown.json()).error.code, -32601);
  assert.equal((await post(auth, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status, 202);
  assert.equal((await fetch(url, { headers: auth })).status, 405);  // no server-initiated stream
  const ok = await post({ ...auth, Origin: 'http://localhost:6274', 'MCP-Protocol-Version': '2025-11-25' });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { jsonrpc: '2.0', id: 1, result: {} });
});
