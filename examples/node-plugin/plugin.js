#!/usr/bin/env node
// A reference client of conclaved for editor plugins, in plain Node with @grpc/grpc-js and
// @grpc/proto-loader. It loads the *installed* API description at run time
// (share/conclave/proto/conclave/v1/conclave.proto under the install prefix), so it never
// vendors a copy of the proto.
//
//   node plugin.js status
//   node plugin.js health
//   node plugin.js demo --terminal T [--profile shell] [--brief-file F | --brief TEXT]
//
// `demo` does what a plugin does to show a worker live: status, create a task, make sure a
// terminal exists, dispatch, stream the transcript as it is written (FollowTranscript), then
// wait for the daemon's own worker_done (Wait, from "conclaved") and print its outcome.
//
// Options (every command): --socket PATH (default $CONCLAVE_SOCKET, else
// $XDG_RUNTIME_DIR/conclave/conclave.sock), --proto-dir DIR (default $CONCLAVE_PROTO_DIR, else
// the first of /usr/local/share/conclave/proto, /usr/share/conclave/proto, ../../proto that
// holds conclave/v1/conclave.proto), --health-proto FILE (for `health`; default Debian's
// grpc-proto copy). CONCLAVE_TOKEN is sent as a bearer token (TCP listeners).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const LOADER_OPTIONS = {
  keepCase: true,  // field names exactly as in the proto (snake_case)
  longs: String,   // int64 as decimal strings: seq and ids never lose precision
  enums: String,
  defaults: true,
  oneofs: true,
};

function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      out._.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      out[a.slice(2, eq)] = a.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out[a.slice(2)] = argv[++i];
    } else {
      out[a.slice(2)] = true;
    }
  }
  return out;
}

function protoDir(args) {
  const candidates = [
    args['proto-dir'],
    process.env.CONCLAVE_PROTO_DIR,
    '/usr/local/share/conclave/proto',
    '/usr/share/conclave/proto',
    path.join(__dirname, '..', '..', 'proto'),
  ].filter(Boolean);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'conclave', 'v1', 'conclave.proto'))) return dir;
  }
  throw new Error('cannot find conclave/v1/conclave.proto under any of: ' + candidates.join(', ') +
                  ' (install Conclave, or pass --proto-dir)');
}

function target(args) {
  let s = args.socket || process.env.CONCLAVE_SOCKET || '';
  if (!s) {
    const runtime = process.env.XDG_RUNTIME_DIR;
    const state = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
    s = runtime ? path.join(runtime, 'conclave', 'conclave.sock')
                : path.join(state, 'conclave', 'conclave.sock');
  }
  if (s.startsWith('tcp:')) return s.slice(4);
  if (s.startsWith('unix:')) return s;
  return 'unix:' + s;
}

function metadata() {
  const md = new grpc.Metadata();
  if (process.env.CONCLAVE_TOKEN) md.set('authorization', 'Bearer ' + process.env.CONCLAVE_TOKEN);
  return md;
}

// A promise for one unary call.
function call(client, method, request, timeoutMs = 30000) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + timeoutMs);
    client[method](request, metadata(), { deadline }, (err, reply) => (err ? reject(err) : resolve(reply)));
  });
}

function connect(args) {
  const file = path.join(protoDir(args), 'conclave', 'v1', 'conclave.proto');
  const def = protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs: [protoDir(args)] });
  const v1 = grpc.loadPackageDefinition(def).conclave.v1;
  return new v1.Conclave(target(args), grpc.credentials.createInsecure());
}

function log(line) {
  process.stdout.write('plugin: ' + line + '\n');
}

async function status(client) {
  const s = await call(client, 'GetStatus', {});
  log(`conclaved ${s.version} pid ${s.pid} on ${s.listener}, last seq ${s.last_seq}, ` +
      `${s.counts.terminals || 0} terminals`);
  return s;
}

async function health(args) {
  const file = args['health-proto'] || '/usr/share/grpc-proto/grpc/health/v1/health.proto';
  const def = protoLoader.loadSync(file, LOADER_OPTIONS);
  const Health = grpc.loadPackageDefinition(def).grpc.health.v1.Health;
  const client = new Health(target(args), grpc.credentials.createInsecure());
  for (const service of ['', 'conclave.v1.Conclave']) {
    const r = await call(client, 'Check', { service });
    log(`health ${service || '(overall)'}: ${r.status}`);
  }
  client.close();
}

// Streams the dispatch's transcript to stdout as the worker writes it; resolves at its end.
function followTranscript(client, dispatchId) {
  return new Promise((resolve, reject) => {
    const stream = client.FollowTranscript({ dispatch_id: dispatchId, cursor: 0 }, metadata());
    let bytes = 0;
    stream.on('data', (chunk) => {
      if (chunk.data && chunk.data.length) {
        bytes += chunk.data.length;
        process.stdout.write(chunk.data);
      }
      if (chunk.eof) log(`transcript of dispatch ${dispatchId} ended after ${bytes} bytes`);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(bytes));
  });
}

async function ensureTerminal(client, handle, profile) {
  try {
    return await call(client, 'GetTerminal', { handle });
  } catch (err) {
    if (err.code !== grpc.status.NOT_FOUND) throw err;
    const t = await call(client, 'CreateTerminal', { profile, handle, cwd: process.cwd() });
    log(`created terminal ${t.handle} (${t.profile})`);
    return t;
  }
}

async function demo(client, args) {
  await status(client);
  let brief = args.brief;
  if (args['brief-file']) brief = fs.readFileSync(args['brief-file'], 'utf8');
  if (typeof brief !== 'string' || !brief) throw new Error('demo: give --brief TEXT or --brief-file F');
  const handle = args.terminal || 'plugin-shell';
  await ensureTerminal(client, handle, args.profile || 'shell');

  const created = await call(client, 'CreateTask', {
    brief, title: args.title || 'node plugin demo', role: 'stage', idempotency_key: args.key || '',
  });
  const task = created.task;
  log(`task ${task.id} ${created.existing ? 'exists' : 'created'} (${task.status})`);

  const d = await call(client, 'Dispatch', { task_id: task.id, to: handle });
  log(`dispatch ${d.id} ${d.state}${d.terminal ? ' on ' + d.terminal : ''}`);

  await followTranscript(client, d.id);

  // The daemon's own worker_done is the authority: sent once the process exited and its output
  // was read to EOF. Wait looks from the start for a task id, so it cannot be missed.
  const w = await call(client, 'Wait', {
    types: ['worker_done'], from: 'conclaved', task_ids: [task.id], timeout_ms: 120000,
  }, 135000);
  if (w.timed_out || !w.messages.length) throw new Error(`no worker_done for task ${task.id}`);
  const done = w.messages[w.messages.length - 1];
  const payload = done.payload_json ? JSON.parse(done.payload_json) : {};
  log(`worker_done #${done.seq}: ${payload.outcome} (exit ${payload.exit_code}, task ` +
      `${payload.task_status})`);
  return payload.outcome === 'succeeded' ? 0 : 1;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const cmd = args._[0] || 'status';
  if (cmd === 'health') return health(args).then(() => 0);
  const client = connect(args);
  try {
    if (cmd === 'status') {
      await status(client);
      return 0;
    }
    if (cmd === 'demo') return await demo(client, args);
    throw new Error(`unknown command '${cmd}' (status, health, demo)`);
  } finally {
    client.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`plugin: ${err.details || err.message}\n`);
    process.exit(err.code === grpc.status.UNAVAILABLE ? 3 : 1);
  });
