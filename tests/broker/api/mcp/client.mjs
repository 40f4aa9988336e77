// Drives `stockade mcp` with the official MCP TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned in package-lock.json): initialize,
// tools/list, running Python, writing and reading files, stdin, a
// timeout, progress, cancellation, hostile paths, a limit above the
// policy, changes, ping. Prints TAP; exits non-zero when a test failed.
//
// Usage: node client.mjs STOCKADE WORKSPACE
// (run by tests/broker/api/test_mcp_sdk.py, as root and as uid 65534)
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const [stockade, workspace] = process.argv.slice(2);
const results = [];
const test = (name, fn) => results.push([name, fn]);

const transport = new StdioClientTransport({
  command: stockade,
  args: ['mcp', '--workspace', workspace],
  stderr: 'inherit',
});
const client = new Client({ name: 'stockade-test', version: '1.0.0' });
// The client tells the transport the revision the server agreed to.
let negotiated;
transport.setProtocolVersion = (v) => { negotiated = v; };

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);

test('initialize negotiates the latest revision with a tools capability', async () => {
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, 'stockade');
  assert.ok(client.getServerCapabilities().tools);
  assert.equal(negotiated, LATEST_PROTOCOL_VERSION);
  assert.match(client.getInstructions() ?? '', /\/work/);
});

test('tools/list gives the ten tools, each with input and output schemas', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(),
    ['changes', 'checkpoint', 'drop_checkpoint', 'list_checkpoints', 'list_files',
      'read_file', 'restore_checkpoint', 'run_code', 'run_command', 'write_file']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.outputSchema.type, 'object', t.name);
    assert.ok(t.description.length > 40, t.name);
    assert.equal(t.annotations.openWorldHint, false, t.name);
  }
  const rc = tools.find((t) => t.name === 'run_code');
  assert.deepEqual(rc.inputSchema.properties.language.enum, ['python', 'bash', 'sh']);
  // The default policy's ceilings: 30 s, 1024 MiB.
  assert.equal(rc.inputSchema.properties.timeout_seconds.maximum, 30);
  assert.equal(rc.inputSchema.properties.memory_mb.maximum, 1024);
});

test('run_code runs Python: structured result and the text form', async () => {
  const r = await call('run_code', { language: 'python', code: 'print(6 * 7)' });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.status, 'ok');
  assert.equal(r.structuredContent.stdout, '42\n');
  assert.equal(r.structuredContent.exit_code, 0);
  assert.match(text(r), /^status: ok\nhint: /);
});

test('run_code passes stdin; run_command runs an argv', async () => {
  let r = await call('run_code', { language: 'python', code: 'import sys; print(sys.stdin.read().upper())', stdin: 'quiet words' });
  assert.equal(r.structuredContent.stdout, 'QUIET WORDS\n');
  r = await call('run_command', { argv: ['sh', '-c', 'echo "$0" "$1"', 'a b', 'c'] });
  assert.equal(r.structuredContent.stdout, 'a b c\n');
  r = await call('run_command', { argv: ['cat'], stdin: 'piped\n' });
  assert.equal(r.structuredContent.stdout, 'piped\n');
});

test('long code (over 16000 bytes) runs from a file', async () => {
  const code = '# ' + 'x'.repeat(20000) + '\nprint("long ok")\n';
  const r = await call('run_code', { language: 'python', code });
  assert.equal(r.structuredContent.status, 'ok', text(r));
  assert.equal(r.structuredContent.stdout, 'long ok\n');
});

test('write_file then read_file and a job sees the file', async () => {
  let r = await call('write_file', { path: 'data/in.txt', content: 'hello\n' });
  assert.equal(r.isError, false, text(r));
  assert.deepEqual(r.structuredContent, { path: 'data/in.txt', size: 6 });
  r = await call('run_code', { language: 'sh', code: 'tr a-z A-Z < data/in.txt > data/out.txt' });
  assert.equal(r.structuredContent.status, 'ok');
  r = await call('read_file', { path: 'data/out.txt' });
  assert.equal(r.structuredContent.encoding, 'utf-8');
  assert.equal(r.structuredContent.content, 'HELLO\n');
  assert.equal(r.structuredContent.truncated, false);
  assert.equal(text(r), 'HELLO\n');
});

test('binary content travels as base64; reads page with offset and length', async () => {
  const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 0x80]);
  let r = await call('write_file', { path: 'bin.dat', content: bytes.toString('base64'), encoding: 'base64' });
  assert.equal(r.structuredContent.size, 7);
  r = await call('read_file', { path: 'bin.dat' });
  assert.equal(r.structuredContent.encoding, 'base64');
  assert.deepEqual(Buffer.from(r.structuredContent.content, 'base64'), bytes);
  await call('write_file', { path: 'abc.txt', content: 'abcdefghij' });
  r = await call('read_file', { path: 'abc.txt', offset: 3, length: 4 });
  assert.equal(r.structuredContent.content, 'defg');
  assert.equal(r.structuredContent.truncated, true);
  assert.equal(r.structuredContent.file_size, 10);
});

test('list_files lists the workspace', async () => {
  const r = await call('list_files', { path: '.', recursive: true });
  const paths = r.structuredContent.entries.map((e) => e.path);
  for (const p of ['data', 'data/in.txt', 'data/out.txt', 'bin.dat']) assert.ok(paths.includes(p), p);
  assert.ok(!paths.some((p) => p.startsWith('.stockade-')), 'no helper file left: ' + paths);
});

test('checkpoint, then restore_checkpoint puts the files back', async () => {
  let r = await call('checkpoint', { name: 'before-edit' });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.checkpoints, 1);
  await call('write_file', { path: 'abc.txt', content: 'edited' });
  await call('write_file', { path: 'ckpt-new.txt', content: 'new' });
  r = await call('list_checkpoints', {});
  assert.deepEqual(r.structuredContent.checkpoints.map((c) => c.name), ['before-edit']);
  r = await call('restore_checkpoint', { name: 'before-edit' });
  assert.equal(r.isError, false);
  assert.ok(r.structuredContent.restored >= 2);
  r = await call('read_file', { path: 'abc.txt' });
  assert.equal(r.structuredContent.content, 'abcdefghij');
  r = await call('read_file', { path: 'ckpt-new.txt' });
  assert.equal(r.isError, true);
  r = await call('drop_checkpoint', { name: 'before-edit' });
  assert.equal(r.structuredContent.checkpoints, 0);
  r = await call('restore_checkpoint', { name: 'before-edit' });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /no_such_checkpoint/);
});

test('a timeout is a result with status timeout and its hint', async () => {
  const r = await call('run_code', { language: 'sh', code: 'sleep 20', timeout_seconds: 1 });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.status, 'timeout');
  assert.match(r.structuredContent.hint, /bound its loops/);
  assert.ok(r.structuredContent.wall_ms < 5000);
});

test('hostile paths are tool errors (isError), never protocol errors', async () => {
  let r = await call('read_file', { path: '../../etc/passwd' });
  assert.equal(r.isError, true);
  assert.match(text(r), /invalid_path/);
  r = await call('write_file', { path: '/etc/stockade-test', content: 'x' });
  assert.equal(r.isError, true);
  assert.match(text(r), /invalid_path/);
  await call('run_command', { argv: ['ln', '-s', '/etc/passwd', 'link'] });
  r = await call('read_file', { path: 'link' });
  assert.equal(r.isError, true);
  assert.match(text(r), /symlink_refused/);
  r = await call('write_file', { path: 'link/x', content: 'x' });
  assert.equal(r.isError, true);
  assert.match(text(r), /symlink_refused|not_a_directory/);
});

test('a limit above the policy is refused as a tool error', async () => {
  const r = await call('run_code', { language: 'python', code: 'print(1)', memory_mb: 999999 });
  assert.equal(r.isError, true);
  assert.match(text(r), /invalid arguments.*memory_mb/);
});

test('an unknown tool is a protocol error', async () => {
  await assert.rejects(call('no_such_tool', {}), /unknown tool/);
});

test('changes reports what the last run did, not the helper files', async () => {
  await call('run_code', { language: 'sh', code: 'echo new > made.txt; rm abc.txt', });
  const r = await call('changes', {});
  const s = r.structuredContent;
  assert.deepEqual(s.created.map((e) => e.path), ['made.txt']);
  assert.deepEqual(s.deleted.map((e) => e.path), ['abc.txt']);
  await call('run_code', { language: 'sh', code: 'cat > piped.txt', stdin: 'x' });
  const r2 = await call('changes', {});
  assert.deepEqual(r2.structuredContent.created.map((e) => e.path), ['piped.txt']);
  assert.deepEqual(r2.structuredContent.deleted, []);
});

test('a long job sends progress notifications', async () => {
  const seen = [];
  const r = await call('run_code', { language: 'sh', code: 'sleep 2.5; echo done' },
    { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true });
  assert.equal(r.structuredContent.stdout, 'done\n');
  assert.ok(seen.length >= 1, 'progress notifications: ' + JSON.stringify(seen));
  assert.ok(seen.every((p) => p.total === 30 && p.progress > 0 && p.progress <= 30));
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
});

test('cancelling a call kills its job; the session goes on', async () => {
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort('test cancels'), 1000);
  await assert.rejects(call('run_code', { language: 'sh', code: 'sleep 20; echo late > late.txt' }, { signal: ac.signal }));
  // The next call is answered only after the cancelled job ended: soon.
  const r = await call('run_code', { language: 'sh', code: 'echo after' });
  assert.equal(r.structuredContent.stdout, 'after\n');
  assert.ok(Date.now() - t0 < 10000, 'the cancelled job was not killed');
  const l = await call('list_files', {});
  assert.ok(!l.structuredContent.entries.some((e) => e.path === 'late.txt'));
});

test('ping is answered', async () => {
  await client.ping();
});

let failed = 0;
console.log(`1..${results.length + 1}`);
let n = 0;
for (const [name, fn] of results) {
  n++;
  try {
    await fn();
    console.log(`ok ${n} - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    for (const line of String(e && e.stack || e).split('\n')) console.log(`# ${line}`);
  }
}
// Closing the transport ends stdin: the server must exit by itself,
// with status 0, before the SDK's SIGTERM 2 s later.
const proc = transport._process;
const exited = new Promise((resolve) => proc ? proc.once('exit', (code, sig) => resolve([code, sig])) : resolve([null, 'none']));
await client.close();
const [code, sig] = await exited;
n++;
if (code === 0) console.log(`ok ${n} - the server exits 0 when the client closes stdin`);
else { failed++; console.log(`not ok ${n} - the server exits 0 when the client closes stdin (exit ${code}, signal ${sig})`); }
process.exit(failed ? 1 : 0);
