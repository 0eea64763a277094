#!/usr/bin/env node
// Conclave e2e mock model provider. Loopback only, no npm dependencies (the wire formats are
// in mock_wire.js beside it).
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
//   findings_none     as findings, with no findings (an approving review)
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
const { anthropicReply, chatReply, responsesReply, geminiReply, errorBody, json, nextId, USAGE } =
  require('./mock_wire.js');

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


const requests = [];
const promptHits = new Map();
let reqCounter = 0;

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

function findingsText(body) {
  return 'Review complete.\n\n```json\n' + JSON.stringify(body || FINDINGS, null, 2) + '\n```\n';
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
  if (s === 'findings' || s === 'findings_none') {
    const body = s === 'findings' ? FINDINGS : { findings: [] };
    // claude --json-schema offers StructuredOutput, qwen --json-schema structured_output.
    const so = req.tools.find((t) => t.name === 'StructuredOutput' || t.name === 'structured_output');
    if (so && req.toolResults.length === 0) return { kind: 'tool', tool: so, args: body };
    // codex --output-schema asks for a JSON answer (Responses text.format / chat response_format).
    if (req.jsonMime && req.api !== 'gemini') return { kind: 'text', text: JSON.stringify(body) };
    return { kind: 'text', text: sc.text || findingsText(body) };
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
