// Wire formats of the Conclave e2e mock provider (mock_provider.js): error bodies, JSON and
// SSE replies for the Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Gemini
// APIs. A reply `d` is {kind:'text', text} | {kind:'tool', tool, args}, optionally with
// spreadMs (stream the text in small deltas spread evenly over that many ms).
'use strict';

// Fixed usage so costs are predictable: 1200 input (300 of them cache reads), 150 output.
const USAGE = { input: 1200, output: 150, cacheRead: 300 };

let idCounter = 0;
const nextId = (p) => `${p}${Date.now().toString(36)}${(++idCounter).toString(36)}`;

// The text cut into deltas: 80-byte pieces normally; when streaming over time at least two
// pieces per second so that a client sees output all along.
function chunks(text, spreadMs) {
  let size = 80;
  if (spreadMs > 0) size = Math.max(1, Math.min(80, Math.floor(text.length / Math.max(2, Math.ceil(spreadMs / 500)))));
  const re = new RegExp(`[\\s\\S]{1,${size}}`, 'g');
  return text.match(re) || [''];
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

module.exports = { anthropicReply, chatReply, responsesReply, geminiReply, errorBody, json, nextId, USAGE };
