#!/usr/bin/env node
// Conclave e2e mock model provider. Loopback only, no npm dependencies.
//
//   node mock_provider.js [PORT] [--scenario FILE]
//
// PORT 0 (default) picks an ephemeral port. Prints "LISTENING <port>" on stdout once
// bound. Every request is logged to stderr as one line:
//   REQ <n> <METHOD> <path> model=<model> api=<api> scenario=<scenario> stream=<0|1> user_bytes=<n> json_schema=<0|1> -> <status>
// (user_bytes: the longest user text in the request, to check that a large brief arrived whole;
// json_schema: the request asked for a schema-shaped answer or offered a structured-output tool)
//
// Speaks enough of:
//   Anthropic Messages      POST /v1/messages (JSON + SSE), POST /v1/messages/count_tokens
//   OpenAI Chat Completions POST /v1/chat/completions (JSON + SSE)
//   OpenAI Responses        POST /v1/responses (SSE + JSON)
//   Gemini                  POST /v1beta/models/<m>:streamGenerateContent?alt=sse,
//                           :generateContent, :countTokens
//   GET  /v1/models, /v1beta/models (model lists)
//   GET  /_mock/requests    JSON array of the requests seen (for tests)
//   POST /_mock/reset       clears the request log and per-prompt counters
//
// The reply is chosen by a marker in the conversation's user text, `MOCK:<scenario>`:
//   contract          a worker-contract answer (SUMMARY / EVIDENCE / CHANGES / RISKS / BLOCKERS)
//   findings          a findings JSON in a ```json fence; a StructuredOutput / structured_output
//                     tool call when the request offers one (claude / qwen --json-schema); the
//                     bare JSON when the request asks for a JSON-schema answer (codex
//                     --output-schema: Responses text.format, Chat response_format)
//   tool_worker_done  a shell tool call running the command given after `CMD:` on the same
//                     line as the marker, then (once a tool result is present) a final
//                     contract answer quoting the tool output
//   http500 / http503 / http429 / http401 / http403   that HTTP error on every request
//                     (429 carries `retry-after: 7`, override with MOCK_RETRY_AFTER)
//   tool_then_slow    as tool_worker_done, but the answer after the tool result waits
//                     MOCK_SLOW_MS (to capture a run killed after its tool ran)
//   flaky500          HTTP 500 for the first request of a given prompt, then a contract
//   slow              waits MOCK_SLOW_MS (default 30000) before answering a contract
//   slowstream        streams a contract answer over MOCK_STREAM_SECONDS (default 10) s:
//                     the headers and first event at once, then the text in small deltas
//                     spread evenly over the time (every wire format; a non-streaming
//                     request gets the whole answer after the time). `slowstream_<N>`
//                     streams over N seconds instead.
// With no marker the scenario comes from the scenario file (--scenario FILE or
// MOCK_SCENARIO_FILE: JSON {"scenario": "...", "text": "...optional final text..."})
// or MOCK_SCENARIO, else "contract".
'use strict';

const http = require('http');
const fs = require('fs');
const crypto = require('crypto');

// ---------------------------------------------------------------- configuration
let port = 0;
let scenarioFile = process.env.MOCK_SCENARIO_FILE || '';
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--scenario') scenarioFile = process.argv[++i];
  else if (/^\d+$/.test(a)) port = parseInt(a, 10);
}
const RETRY_AFTER = process.env.MOCK_RETRY_AFTER || '7';
const SLOW_MS = parseInt(process.env.MOCK_SLOW_MS || '30000', 10);
const STREAM_SECONDS = parseFloat(process.env.MOCK_STREAM_SECONDS || '10');

// Streaming over time: the number of seconds for this scenario (0 = stream at once).
function streamSeconds(scenario) {
  if (scenario === 'slowstream') return STREAM_SECONDS;
  const m = /^slowstream_(\d+)$/.exec(scenario);
  return m ? parseInt(m[1], 10) : 0;
}

// The text cut into deltas: 80-byte pieces normally; when streaming over time at least two
// pieces per second so that a client sees output all along.
function chunks(text, spreadMs) {
  let size = 80;
  if (spreadMs > 0) size = Math.max(1, Math.min(80, Math.floor(text.length / Math.max(2, Math.ceil(spreadMs / 500)))));
  const re = new RegExp(`[\\s\\S]{1,${size}}`, 'g');
  return text.match(re) || [''];
}

function fileScenario() {
  if (scenarioFile) {
    try {
      return JSON.parse(fs.readFileSync(scenarioFile, 'utf8'));
    } catch (e) {
      process.stderr.write(`mock: cannot read scenario file ${scenarioFile}: ${e.message}\n`);
    }
  }
  return { scenario: process.env.MOCK_SCENARIO || 'contract' };
}

// Fixed usage so costs are predictable: 1200 input (300 of them cache reads), 150 output.
const USAGE = { input: 1200, output: 150, cacheRead: 300 };

const requests = [];
const promptHits = new Map();
let reqCounter = 0;
let idCounter = 0;
const nextId = (p) => `${p}${Date.now().toString(36)}${(++idCounter).toString(36)}`;

// ---------------------------------------------------------------- canned texts
function contractText(extraEvidence) {
  return [
    'SUMMARY: Mock worker completed the task as briefed.',
    `EVIDENCE: scripted reply from the Conclave mock provider${extraEvidence ? `; ${extraEvidence}` : ''}.`,
    'CHANGES: none',
    'RISKS: none',
    'BLOCKERS: none',
  ].join('\n');
}

const FINDINGS = {
  findings: [
    {
      id: 'F1',
      severity: 'HIGH',
      category: 'correctness',
      location: { path: 'a.cpp', line: 3 },
      title: 'Off-by-one in loop bound',
      detail: 'The loop runs to i <= n and reads one element past the end of the buffer.',
      stance: 'new',
      refs: [],
    },
  ],
};

function findingsText() {
  return 'Review complete.\n\n```json\n' + JSON.stringify(FINDINGS, null, 2) + '\n```\n';
}

// ---------------------------------------------------------------- request normalisation
// Produces {api, model, stream, userTexts[], toolResults[], tools[{name, schema, kind}]}
function textOf(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('\n');
  if (typeof content === 'object') {
    if (typeof content.text === 'string') return content.text;
    if (content.content !== undefined) return textOf(content.content);
    if (typeof content.output === 'string') return content.output;
  }
  return '';
}

function normalise(api, body, urlModel, query) {
  const out = { api, model: body.model || urlModel || '', stream: false, userTexts: [], toolResults: [], tools: [] };
  if (api === 'anthropic') {
    out.stream = !!body.stream;
    for (const m of body.messages || []) {
      if (m.role !== 'user') continue;
      if (typeof m.content === 'string') { out.userTexts.push(m.content); continue; }
      for (const b of m.content || []) {
        if (b.type === 'tool_result') out.toolResults.push(textOf(b.content));
        else if (b.type === 'text') out.userTexts.push(b.text);
      }
    }
    for (const t of body.tools || []) out.tools.push({ name: t.name, schema: t.input_schema || {}, kind: 'function' });
  } else if (api === 'chat') {
    out.stream = !!body.stream;
    for (const m of body.messages || []) {
      if (m.role === 'user') out.userTexts.push(textOf(m.content));
      else if (m.role === 'tool') out.toolResults.push(textOf(m.content));
    }
    for (const t of body.tools || []) {
      const f = t.function || t;
      out.tools.push({ name: f.name, schema: f.parameters || {}, kind: 'function' });
    }
    const rf = body.response_format;
    if (rf && rf.type === 'json_schema') {
      out.jsonSchema = (rf.json_schema && rf.json_schema.schema) || {};
      out.jsonMime = true;
    }
  } else if (api === 'responses') {
    out.stream = body.stream !== false;
    const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input || [];
    for (const it of input) {
      if ((it.type === 'message' || !it.type) && it.role === 'user') out.userTexts.push(textOf(it.content));
      else if (/_call_output$/.test(it.type || '')) out.toolResults.push(textOf(it.output));
    }
    for (const t of body.tools || []) {
      if (t.type === 'function') out.tools.push({ name: t.name, schema: t.parameters || {}, kind: 'function' });
      else if (t.type === 'local_shell') out.tools.push({ name: 'local_shell', schema: {}, kind: 'local_shell' });
      else if (t.type === 'custom') out.tools.push({ name: t.name, schema: {}, kind: 'custom' });
    }
    const fmt = body.text && body.text.format;
    if (fmt && fmt.type === 'json_schema') {
      out.jsonSchema = fmt.schema || {};
      out.jsonMime = true;
    }
  } else if (api === 'gemini') {
    out.stream = /streamGenerateContent/.test(query.path);
    for (const c of body.contents || []) {
      if (c.role !== 'user' && c.role !== 'function') continue;
      for (const p of c.parts || []) {
        if (p.functionResponse) out.toolResults.push(JSON.stringify(p.functionResponse.response || {}));
        else if (typeof p.text === 'string') out.userTexts.push(p.text);
      }
    }
    for (const t of body.tools || []) {
      for (const f of t.functionDeclarations || []) {
        out.tools.push({ name: f.name, schema: f.parametersJsonSchema || f.parameters || {}, kind: 'function' });
      }
    }
    const gc = body.generationConfig || {};
    out.jsonSchema = gc.responseJsonSchema || gc.responseSchema || null;
    out.jsonMime = gc.responseMimeType === 'application/json';
  }
  return out;
}

function pickScenario(req) {
  // Newest user text with a marker wins.
  for (let i = req.userTexts.length - 1; i >= 0; i--) {
    const t = req.userTexts[i] || '';
    const m = /MOCK:([a-z0-9_]+)/.exec(t);
    if (m) {
      const cmdM = /MOCK:(?:tool_worker_done|tool_then_slow)[ \t]+CMD:[ \t]*([^\r\n]*)/.exec(t);
      return { scenario: m[1], cmd: cmdM ? cmdM[1].trim() : '', key: t.slice(0, 400) };
    }
  }
  const f = fileScenario();
  return { scenario: f.scenario || 'contract', cmd: f.cmd || '', text: f.text, key: 'file' };
}

// ---------------------------------------------------------------- decisions
const SHELL_TOOLS = ['Bash', 'run_shell_command', 'shell_command', 'exec_command', 'shell', 'bash', 'local_shell'];

function findShellTool(tools) {
  for (const n of SHELL_TOOLS) {
    const t = tools.find((x) => x.name === n);
    if (t) return t;
  }
  return null;
}

function shellArgs(tool, cmd) {
  const props = (tool.schema && tool.schema.properties) || {};
  const required = (tool.schema && tool.schema.required) || [];
  const args = {};
  for (const [k, s] of Object.entries(props)) {
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (k === 'command' || k === 'cmd') {
      args[k] = type === 'array' ? ['bash', '-lc', cmd] : cmd;
    } else if (k === 'description') {
      args[k] = 'Run the command requested by the brief';
    } else if (required.includes(k)) {
      if (type === 'boolean') args[k] = false;
      else if (type === 'integer' || type === 'number') args[k] = 60000;
      else if (type === 'array') args[k] = [];
      else if (type === 'object') args[k] = {};
      else args[k] = '';
    }
  }
  if (!('command' in args) && !('cmd' in args)) args.command = cmd;
  return args;
}

// Returns {kind:'error', status, ...} | {kind:'text', text} | {kind:'tool', tool, args}
function decide(req, sc) {
  const s = sc.scenario;
  const errs = { http500: 500, http502: 502, http503: 503, http529: 529, http429: 429, http401: 401, http403: 403 };
  if (errs[s]) return { kind: 'error', status: errs[s] };
  if (s === 'flaky500') {
    const k = crypto.createHash('sha1').update(sc.key).digest('hex');
    const n = (promptHits.get(k) || 0) + 1;
    promptHits.set(k, n);
    if (n === 1) return { kind: 'error', status: 500 };
    return { kind: 'text', text: contractText('recovered after one HTTP 500') };
  }
  if (s === 'findings') {
    // claude --json-schema offers StructuredOutput, qwen --json-schema structured_output.
    const so = req.tools.find((t) => t.name === 'StructuredOutput' || t.name === 'structured_output');
    if (so && req.toolResults.length === 0) return { kind: 'tool', tool: so, args: FINDINGS };
    // codex --output-schema asks for a JSON answer (Responses text.format / chat response_format).
    if (req.jsonMime && req.api !== 'gemini') return { kind: 'text', text: JSON.stringify(FINDINGS) };
    return { kind: 'text', text: sc.text || findingsText() };
  }
  if (s === 'tool_worker_done' || s === 'tool_then_slow') {
    const sh = findShellTool(req.tools);
    if (req.toolResults.length > 0) {
      const last = req.toolResults[req.toolResults.length - 1].replace(/\s+/g, ' ').trim().slice(0, 200);
      const d = { kind: 'text', text: sc.text || contractText(`tool output: ${last}`) };
      if (s === 'tool_then_slow') d.delayMs = SLOW_MS;
      return d;
    }
    if (sh && sc.cmd) return { kind: 'tool', tool: sh, args: shellArgs(sh, sc.cmd) };
    return { kind: 'text', text: contractText(sh ? 'no CMD: given' : 'no shell tool offered') };
  }
  const secs = streamSeconds(s);
  if (secs > 0) return { kind: 'text', text: sc.text || contractText(`streamed over ${secs} s`), spreadMs: secs * 1000 };
  return { kind: 'text', text: sc.text || contractText() };
}

// ---------------------------------------------------------------- error bodies
function errorBody(api, status) {
  const msgs = {
    401: 'invalid x-api-key',
    403: 'permission denied for this API key',
    429: 'Rate limit exceeded: too many requests, please retry later',
    500: 'Internal server error',
  };
  const msg = msgs[status] || (status === 529 ? 'Overloaded' : 'Service unavailable');
  if (api === 'anthropic') {
    const type = { 401: 'authentication_error', 403: 'permission_error', 429: 'rate_limit_error', 529: 'overloaded_error' }[status] || 'api_error';
    return { type: 'error', error: { type, message: msg }, request_id: nextId('req_') };
  }
  if (api === 'gemini') {
    const st = { 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL' }[status] || 'UNAVAILABLE';
    return { error: { code: status, message: status === 401 ? 'API key not valid. Please pass a valid API key.' : msg, status: st } };
  }
  const type = { 401: 'invalid_request_error', 403: 'permission_error', 429: 'rate_limit_exceeded' }[status] || 'server_error';
  const code = { 401: 'invalid_api_key', 429: 'rate_limit_exceeded' }[status] || null;
  return { error: { message: status === 401 ? 'Incorrect API key provided: mock-bad-key.' : msg, type, param: null, code } };
}

// ---------------------------------------------------------------- SSE helper
// lines: [event|null, data, isDelta?]. With spreadMs > 0 the delta events are written at
// even intervals over spreadMs (everything before the first delta at once).
function sse(res, lines, spreadMs) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const write = ([ev, data]) => {
    if (ev) res.write(`event: ${ev}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  };
  const deltas = lines.filter((l) => l[2]).length;
  if (!spreadMs || deltas === 0) {
    for (const l of lines) write(l);
    return res.end();
  }
  const interval = spreadMs / deltas;
  let i = 0;
  let closed = false;
  res.on('close', () => { closed = true; });
  const step = () => {
    while (!closed && i < lines.length) {
      const l = lines[i++];
      write(l);
      if (l[2] && i < lines.length) return setTimeout(step, interval);
    }
    if (!closed) res.end();
  };
  step();
}

function json(res, status, obj, headers) {
  const body = JSON.stringify(obj);
  res.writeHead(status, Object.assign({ 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, headers || {}));
  res.end(body);
}

// ---------------------------------------------------------------- Anthropic
function anthropicReply(res, req, d) {
  const id = nextId('msg_');
  const usage = { input_tokens: USAGE.input - USAGE.cacheRead, output_tokens: USAGE.output, cache_creation_input_tokens: 0, cache_read_input_tokens: USAGE.cacheRead };
  let block;
  if (d.kind === 'tool') block = { type: 'tool_use', id: nextId('toolu_'), name: d.tool.name, input: d.args };
  else block = { type: 'text', text: d.text };
  const stop = d.kind === 'tool' ? 'tool_use' : 'end_turn';
  if (!req.stream) {
    return json(res, 200, { id, type: 'message', role: 'assistant', model: req.model, content: [block], stop_reason: stop, stop_sequence: null, usage });
  }
  const ev = [];
  ev.push(['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: req.model, content: [], stop_reason: null, stop_sequence: null, usage: Object.assign({}, usage, { output_tokens: 1 }) } }]);
  if (block.type === 'text') {
    ev.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]);
    for (const chunk of chunks(block.text, d.spreadMs)) {
      ev.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: chunk } }, true]);
    }
  } else {
    ev.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }]);
    ev.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
  }
  ev.push(['content_block_stop', { type: 'content_block_stop', index: 0 }]);
  ev.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: USAGE.output } }]);
  ev.push(['message_stop', { type: 'message_stop' }]);
  sse(res, ev, d.spreadMs);
}

// ---------------------------------------------------------------- OpenAI chat completions
function chatReply(res, req, d, body) {
  const id = nextId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output, prompt_tokens_details: { cached_tokens: USAGE.cacheRead } };
  const toolCall = d.kind === 'tool' ? { id: nextId('call_'), type: 'function', function: { name: d.tool.name, arguments: JSON.stringify(d.args) } } : null;
  const finish = toolCall ? 'tool_calls' : 'stop';
  if (!req.stream) {
    const message = { role: 'assistant', content: toolCall ? null : d.text };
    if (toolCall) message.tool_calls = [toolCall];
    return json(res, 200, { id, object: 'chat.completion', created, model: req.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const base = { id, object: 'chat.completion.chunk', created, model: req.model };
  const ev = [];
  ev.push([null, Object.assign({}, base, { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })]);
  if (toolCall) {
    ev.push([null, Object.assign({}, base, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] }, finish_reason: null }] })]);
    ev.push([null, Object.assign({}, base, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: toolCall.function.arguments } }] }, finish_reason: null }] })]);
  } else {
    for (const chunk of chunks(d.text, d.spreadMs)) {
      ev.push([null, Object.assign({}, base, { choices: [{ index: 0, delta: { content: chunk }, finish_reason: null }] }), true]);
    }
  }
  const includeUsage = body.stream_options && body.stream_options.include_usage;
  ev.push([null, Object.assign({}, base, { choices: [{ index: 0, delta: {}, finish_reason: finish }] }, includeUsage ? {} : { usage })]);
  if (includeUsage) ev.push([null, Object.assign({}, base, { choices: [], usage })]);
  ev.push([null, '[DONE]']);
  sse(res, ev, d.spreadMs);
}

// ---------------------------------------------------------------- OpenAI responses
function responsesReply(res, req, d) {
  const id = nextId('resp_');
  const created_at = Math.floor(Date.now() / 1000);
  const usage = { input_tokens: USAGE.input, input_tokens_details: { cached_tokens: USAGE.cacheRead }, output_tokens: USAGE.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.input + USAGE.output };
  let item;
  if (d.kind === 'tool' && d.tool.kind === 'local_shell') {
    item = { type: 'local_shell_call', id: nextId('lsh_'), call_id: nextId('call_'), status: 'completed', action: { type: 'exec', command: d.args.command, env: {} } };
  } else if (d.kind === 'tool') {
    item = { type: 'function_call', id: nextId('fc_'), call_id: nextId('call_'), name: d.tool.name, arguments: JSON.stringify(d.args), status: 'completed' };
  } else {
    item = { type: 'message', id: nextId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: d.text, annotations: [] }] };
  }
  const resp = (status, output, u) => Object.assign({ id, object: 'response', created_at, status, model: req.model, output }, u ? { usage: u } : {});
  if (!req.stream) return json(res, 200, resp('completed', [item], usage));
  let seq = 0;
  const ev = [];
  const push = (type, data) => ev.push([type, Object.assign({ type, sequence_number: seq++ }, data)]);
  push('response.created', { response: resp('in_progress', []) });
  push('response.in_progress', { response: resp('in_progress', []) });
  if (item.type === 'message') {
    push('response.output_item.added', { output_index: 0, item: Object.assign({}, item, { status: 'in_progress', content: [] }) });
    push('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const chunk of chunks(d.text, d.spreadMs)) {
      push('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: chunk });
      ev[ev.length - 1].push(true);
    }
    push('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text: d.text });
    push('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  } else {
    push('response.output_item.added', { output_index: 0, item: Object.assign({}, item, item.arguments !== undefined ? { arguments: '', status: 'in_progress' } : {}) });
    if (item.arguments !== undefined) {
      push('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments });
      push('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments });
    }
  }
  push('response.output_item.done', { output_index: 0, item });
  push('response.completed', { response: resp('completed', [item], usage) });
  sse(res, ev, d.spreadMs);
}

// ---------------------------------------------------------------- Gemini
function fillSchema(s, depth) {
  if (!s || depth > 6) return null;
  const type = String(Array.isArray(s.type) ? s.type[0] : s.type || (s.properties ? 'object' : 'string')).toLowerCase();
  if (s.enum && s.enum.length) return s.enum.includes('user') ? 'user' : s.enum[0];
  if (type === 'object') {
    const o = {};
    for (const [k, v] of Object.entries(s.properties || {})) o[k] = fillSchema(v, depth + 1);
    return o;
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'integer' || type === 'number') return 0;
  return 'mock';
}

function geminiReply(res, req, d) {
  const usageMetadata = { promptTokenCount: USAGE.input, candidatesTokenCount: USAGE.output, totalTokenCount: USAGE.input + USAGE.output, cachedContentTokenCount: USAGE.cacheRead };
  let parts;
  if (d.kind === 'tool') parts = [{ functionCall: { name: d.tool.name, args: d.args } }];
  else if (req.jsonMime && req.jsonSchema) parts = [{ text: JSON.stringify(fillSchema(req.jsonSchema, 0)) }];
  else parts = [{ text: d.text }];
  const cand = (p, fin) => Object.assign({ content: { role: 'model', parts: p }, index: 0 }, fin ? { finishReason: 'STOP' } : {});
  const full = { candidates: [cand(parts, true)], usageMetadata, modelVersion: req.model, responseId: nextId('gem_') };
  if (!req.stream) return json(res, 200, full);
  const ev = [];
  const spread = req.jsonMime ? 0 : d.spreadMs;
  if (parts[0].text && (parts[0].text.length > 80 || spread) && !req.jsonMime) {
    const pieces = spread ? chunks(parts[0].text, spread) : [parts[0].text.slice(0, Math.floor(parts[0].text.length / 2)), parts[0].text.slice(Math.floor(parts[0].text.length / 2))];
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1;
      ev.push([null, Object.assign({ candidates: [cand([{ text: piece }], last)] }, last ? { usageMetadata } : {}, { modelVersion: req.model, responseId: full.responseId }), true]);
    });
  } else {
    ev.push([null, full]);
  }
  sse(res, ev, spread);
}

// ---------------------------------------------------------------- server
function route(method, path) {
  if (method !== 'POST') return null;
  if (/\/messages\/count_tokens$/.test(path)) return 'anthropic_count';
  if (/\/messages$/.test(path)) return 'anthropic';
  if (/\/chat\/completions$/.test(path)) return 'chat';
  if (/\/responses$/.test(path)) return 'responses';
  if (/:countTokens$/.test(path)) return 'gemini_count';
  if (/:(stream)?[gG]enerateContent$/.test(path)) return 'gemini';
  return null;
}

const server = http.createServer((hreq, res) => {
  const chunks = [];
  hreq.on('data', (c) => chunks.push(c));
  hreq.on('end', () => {
    const n = ++reqCounter;
    const url = new URL(hreq.url, 'http://127.0.0.1');
    const path = url.pathname;
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = {};
    try { body = raw ? JSON.parse(raw) : {}; } catch (e) { body = {}; }
    let userBytes = 0;  // the longest user text of the request (to prove a large brief arrived whole)
    let schema = 0;     // 1 when the request asks for a JSON-schema answer or offers a structured-output tool
    const log = (api, model, scenario, stream, status) => {
      requests.push({ n, method: hreq.method, path, api, model, scenario, stream, status, user_bytes: userBytes, json_schema: schema, t: Date.now() });
      process.stderr.write(`REQ ${n} ${hreq.method} ${path} model=${model || '-'} api=${api} scenario=${scenario} stream=${stream ? 1 : 0} user_bytes=${userBytes} json_schema=${schema} -> ${status}\n`);
    };

    if (hreq.method === 'HEAD' && path === '/') { res.writeHead(200); return res.end(); }
    if (hreq.method === 'GET' && path === '/_mock/requests') return json(res, 200, requests);
    if (path === '/_mock/reset') { requests.length = 0; promptHits.clear(); return json(res, 200, { ok: true }); }
    if (hreq.method === 'GET' && /\/models\/?$/.test(path)) {
      log('models', '', '-', false, 200);
      if (/v1beta/.test(path)) return json(res, 200, { models: [{ name: 'models/gemini-2.5-pro' }, { name: 'models/gemini-2.5-flash' }] });
      return json(res, 200, { object: 'list', data: ['mock-model', 'gpt-5', 'qwen3-coder-plus'].map((id) => ({ id, object: 'model', created: 0, owned_by: 'mock' })) });
    }
    const kind = route(hreq.method, path);
    if (!kind) {
      log('unknown', body.model, '-', false, 404);
      return json(res, 404, { error: { message: `mock: no route for ${hreq.method} ${path}` } });
    }
    const gm = /\/models\/([^/:]+):/.exec(path);
    const urlModel = gm ? decodeURIComponent(gm[1]) : '';
    if (kind === 'anthropic_count') { log(kind, body.model, '-', false, 200); return json(res, 200, { input_tokens: USAGE.input }); }
    if (kind === 'gemini_count') { log(kind, urlModel, '-', false, 200); return json(res, 200, { totalTokens: USAGE.input }); }

    const req = normalise(kind, body, urlModel, { path: hreq.url });
    for (const t of req.userTexts) userBytes = Math.max(userBytes, Buffer.byteLength(t || ''));
    if ((req.jsonMime && req.api !== 'gemini') || req.tools.some((t) => /^(StructuredOutput|structured_output)$/.test(t.name))) schema = 1;
    const sc = pickScenario(req);
    if (process.env.MOCK_DEBUG) {
      process.stderr.write(`DEBUG ${n} userTexts=${JSON.stringify(req.userTexts).slice(0, 4000)} toolResults=${req.toolResults.length} tools=${req.tools.map((t) => t.name).join(',')} cmd=${JSON.stringify(sc.cmd || '')}\n`);
    }
    const d = decide(req, sc);
    if (d.kind === 'error') {
      log(kind, req.model, sc.scenario, req.stream, d.status);
      const headers = d.status === 429 ? { 'retry-after': RETRY_AFTER } : {};
      if (kind === 'anthropic') headers['request-id'] = nextId('req_');
      return json(res, d.status, errorBody(kind, d.status), headers);
    }
    const go = () => {
      log(kind, req.model, sc.scenario + (d.kind === 'tool' ? `(tool:${d.tool.name})` : ''), req.stream, 200);
      if (kind === 'anthropic') return anthropicReply(res, req, d);
      if (kind === 'chat') return chatReply(res, req, d, body);
      if (kind === 'responses') return responsesReply(res, req, d);
      return geminiReply(res, req, d);
    };
    if (sc.scenario === 'slow') setTimeout(go, SLOW_MS);
    else if (d.delayMs) setTimeout(go, d.delayMs);
    else if (d.spreadMs && !req.stream) setTimeout(go, d.spreadMs);
    else go();
  });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
