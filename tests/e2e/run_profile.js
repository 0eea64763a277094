#!/usr/bin/env node
// Runs one shipped profile the way conclaved launches it, without the daemon: isolated
// HOME/TMPDIR (XDG_* under it), the profile's files written, env and argv templates
// resolved, the brief on stdin, as the last argument, or per "brief_large" when an argument
// brief is larger than 100 KiB. Used to capture the real CLIs' output against
// mock_provider.js (see capture.sh and NOTES.md) and by e2e_test.cpp for CLI-level cases.
//
//   node run_profile.js --profile profiles/claude.json --brief FILE --out DIR
//        [--cwd DIR] [--budget USD] [--review] [--readonly] [--schema FILE]
//        [--brief-threshold BYTES] [--timeout-s N] [--kill-signal SIGKILL]
//
// Writes DIR/stdout.txt, DIR/stderr.txt, DIR/argv.json, DIR/lines.json and
// DIR/stderr_lines.json (the time in ms at which each line arrived, for streaming checks) and prints one JSON summary line:
// {"exit":N,"signal":S,"elapsed_ms":T,"stdout_lines":L,"first_line_ms":..,"last_line_ms":..}
// Template references as in daemon/exec/profile.h; ${findings_schema} is the schema text
// and ${findings_schema_file} its path (from --schema), ${BRIEF_FILE} the brief's path.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (!a.startsWith('--')) continue;
  const key = a.slice(2);
  if (['review', 'readonly'].includes(key)) args[key] = true;
  else args[key] = process.argv[++i];
}
for (const req of ['profile', 'brief', 'out']) {
  if (!args[req]) {
    process.stderr.write(`run_profile: --${req} is required\n`);
    process.exit(2);
  }
}

const profile = JSON.parse(fs.readFileSync(args.profile, 'utf8'));
const out = path.resolve(args.out);
fs.mkdirSync(out, { recursive: true });
const home = fs.mkdtempSync(path.join(out, 'home.'));
const tmp = path.join(home, 'tmp');
fs.mkdirSync(tmp, { recursive: true });
const cwd = path.resolve(args.cwd || fs.mkdtempSync(path.join(out, 'cwd.')));
const briefFile = path.join(out, 'brief.txt');
fs.copyFileSync(args.brief, briefFile);
const brief = fs.readFileSync(briefFile, 'utf8');
const schemaFile = args.schema ? path.resolve(args.schema) : '';

const vars = {
  HOME: home,
  TMPDIR: tmp,
  CWD: cwd,
  DISPATCH_DIR: out,
  BRIEF_FILE: briefFile,
  budget_usd: args.budget || '0',
  findings_schema: schemaFile ? fs.readFileSync(schemaFile, 'utf8').trim() : '',
  findings_schema_file: schemaFile,
};

// As daemon/exec/profile.cpp ResolveTemplate: ${env:NAME}, ${env:NAME:-default} (the default
// may hold references), ${file:PATH}, and the vars above.
function resolve(text, key) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('${', i);
    if (start < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, start);
    let end = start + 2;
    for (let depth = 1; end < text.length; end++) {
      if (text.startsWith('${', end)) {
        depth++;
        end++;
      } else if (text[end] === '}' && --depth === 0) break;
    }
    if (end >= text.length) throw new Error(`${key}: unterminated \${`);
    const ref = text.slice(start + 2, end);
    if (ref.startsWith('env:')) {
      let name = ref.slice(4);
      let def;
      const d = name.indexOf(':-');
      if (d >= 0) {
        def = name.slice(d + 2);
        name = name.slice(0, d);
      }
      if (process.env[name]) out += process.env[name];
      else if (def !== undefined) out += resolve(def, key);
      else throw new Error(`${key}: environment variable ${name} is not set`);
    } else if (ref.startsWith('file:')) {
      out += fs.readFileSync(ref.slice(5), 'utf8').replace(/[\r\n]+$/, '');
    } else if (ref in vars) {
      out += vars[ref];
    } else {
      throw new Error(`${key}: unknown template reference \${${ref}}`);
    }
    i = end + 1;
  }
  return out;
}

const env = {
  PATH: process.env.PATH,
  HOME: home,
  TMPDIR: tmp,
  LANG: 'C.UTF-8',
  XDG_CONFIG_HOME: path.join(home, '.config'),
  XDG_CACHE_HOME: path.join(home, '.cache'),
  XDG_DATA_HOME: path.join(home, '.local/share'),
  XDG_STATE_HOME: path.join(home, '.local/state'),
  PWD: cwd,
};
for (const [k, v] of Object.entries(profile.env || {})) env[k] = resolve(v, k);
for (const [p, c] of Object.entries(profile.files || {})) {
  const file = resolve(p, 'files');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, resolve(c, p), { mode: 0o600 });
}

const argv = profile.command.map((a) => resolve(a, 'command'));
if (Number(args.budget) > 0) for (const a of profile.budget_flag || []) argv.push(resolve(a, 'budget_flag'));
if (args.review) {
  for (const a of profile.review_args || []) argv.push(resolve(a, 'review_args'));
  if (schemaFile) for (const a of profile.schema_args || []) argv.push(resolve(a, 'schema_args'));
}
if (args.review || args.readonly) for (const a of profile.readonly_args || []) argv.push(resolve(a, 'readonly_args'));

// Brief delivery as exec::PlanBriefDelivery: "stdin" | "arg"; an "arg" brief past
// kMaxArgBriefBytes (100 KiB) goes by "brief_large": "stdin", or "args" (brief_large_args,
// naming the brief file with ${BRIEF_FILE}).
const kMaxArgBriefBytes = Number(args['brief-threshold'] || 100 * 1024);
let mode = profile.brief || 'stdin';
if (mode === 'arg' && Buffer.byteLength(brief) > kMaxArgBriefBytes && profile.brief_large) {
  mode = profile.brief_large;
}
let stdinText = '';
if (mode === 'stdin') stdinText = brief;
else if (mode === 'arg') argv.push(brief);
else if (mode === 'args') for (const a of profile.brief_large_args || []) argv.push(resolve(a, 'brief_large_args'));
else {
  process.stderr.write(`run_profile: unknown brief mode ${mode}\n`);
  process.exit(2);
}
fs.writeFileSync(path.join(out, 'argv.json'), JSON.stringify(argv.map((a) => (a.length > 300 ? a.slice(0, 300) + '...' : a)), null, 1));

const t0 = Date.now();
const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
const so = [];
const se = [];
const lineTimes = [];
let partial = '';
child.stdout.on('data', (c) => {
  so.push(c);
  partial += c.toString('utf8');
  let nl;
  while ((nl = partial.indexOf('\n')) >= 0) {
    lineTimes.push(Date.now() - t0);
    partial = partial.slice(nl + 1);
  }
});
const errTimes = [];
child.stderr.on('data', (c) => {
  se.push(c);
  for (const ch of c.toString('utf8')) if (ch === '\n') errTimes.push(Date.now() - t0);
});
child.stdin.on('error', () => {});
child.stdin.end(stdinText);
const limit = Number(args['timeout-s'] || 300) * 1000;
const timer = setTimeout(() => {
  try { process.kill(-child.pid, args['kill-signal'] || 'SIGTERM'); } catch (e) { /* gone */ }
}, limit);
child.on('error', (e) => {
  process.stdout.write(JSON.stringify({ exit: -1, spawn_error: e.code || e.message }) + '\n');
  process.exit(0);
});
child.on('close', (code, signal) => {
  clearTimeout(timer);
  try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone */ }
  fs.writeFileSync(path.join(out, 'stdout.txt'), Buffer.concat(so));
  fs.writeFileSync(path.join(out, 'stderr.txt'), Buffer.concat(se));
  fs.writeFileSync(path.join(out, 'lines.json'), JSON.stringify(lineTimes));
  fs.writeFileSync(path.join(out, 'stderr_lines.json'), JSON.stringify(errTimes));
  const summary = JSON.stringify({
    exit: code === null ? -1 : code,
    signal,
    elapsed_ms: Date.now() - t0,
    stdout_lines: lineTimes.length,
    first_line_ms: lineTimes.length ? lineTimes[0] : null,
    last_line_ms: lineTimes.length ? lineTimes[lineTimes.length - 1] : null,
  });
  fs.writeFileSync(path.join(out, 'summary.json'), summary + '\n');
  process.stdout.write(summary + '\n');
});
