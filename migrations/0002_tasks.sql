-- Worker terminals, tasks with their dependency DAG, dispatch attempts, decision gates,
-- and per-profile cooldowns.
CREATE TABLE terminals (
  handle          TEXT PRIMARY KEY,
  profile         TEXT NOT NULL,
  cwd             TEXT NOT NULL,
  state           TEXT NOT NULL,
  active_dispatch INTEGER NOT NULL DEFAULT 0,
  created_ms      INTEGER NOT NULL
);

CREATE TABLE tasks (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  title             TEXT NOT NULL,
  brief             TEXT NOT NULL,
  status            TEXT NOT NULL,
  role              TEXT NOT NULL,
  hypothesis        TEXT NOT NULL DEFAULT '',
  scope             TEXT NOT NULL DEFAULT '',
  validation        TEXT NOT NULL DEFAULT '',
  idem_key          TEXT UNIQUE,
  blocked_reason    TEXT NOT NULL DEFAULT '',
  resume_status     TEXT NOT NULL DEFAULT '',
  result            TEXT NOT NULL DEFAULT '',
  created_ms        INTEGER NOT NULL,
  updated_ms        INTEGER NOT NULL,
  auto_retry        INTEGER NOT NULL DEFAULT 0,
  auto_retries_used INTEGER NOT NULL DEFAULT 0,
  coordinator       TEXT NOT NULL,
  session           TEXT NOT NULL DEFAULT '',
  budget_usd        REAL NOT NULL DEFAULT 0,
  unmet_deps        INTEGER NOT NULL DEFAULT 0,
  breaker_count     INTEGER NOT NULL DEFAULT 0,
  breaker_fp        TEXT NOT NULL DEFAULT '',
  last_target       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX tasks_status ON tasks(status, id);

CREATE TABLE task_deps (
  task_id INTEGER NOT NULL,
  dep_id  INTEGER NOT NULL,
  PRIMARY KEY (task_id, dep_id)
);
CREATE INDEX task_deps_dep ON task_deps(dep_id);

CREATE TABLE dispatches (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id        INTEGER NOT NULL,
  target         TEXT NOT NULL,
  terminal       TEXT NOT NULL DEFAULT '',
  profile        TEXT NOT NULL DEFAULT '',
  family         TEXT NOT NULL DEFAULT '',
  state          TEXT NOT NULL,
  attempt        INTEGER NOT NULL,
  op_retries     INTEGER NOT NULL DEFAULT 0,
  coordinator    TEXT NOT NULL,
  token          TEXT NOT NULL DEFAULT '',
  pid            INTEGER NOT NULL DEFAULT 0,
  proc_start     INTEGER NOT NULL DEFAULT 0,
  created_ms     INTEGER NOT NULL,
  not_before_ms  INTEGER NOT NULL DEFAULT 0,
  started_ms     INTEGER NOT NULL DEFAULT 0,
  finished_ms    INTEGER NOT NULL DEFAULT 0,
  deadline_ms    INTEGER NOT NULL DEFAULT 0,
  last_output_ms INTEGER NOT NULL DEFAULT 0,
  timeout_s      INTEGER NOT NULL DEFAULT 0,
  budget_usd     REAL NOT NULL DEFAULT 0,
  exit_code      INTEGER NOT NULL DEFAULT -1,
  failure_kind   TEXT NOT NULL DEFAULT '',
  failure_class  TEXT NOT NULL DEFAULT '',
  fingerprint    TEXT NOT NULL DEFAULT '',
  evidence       TEXT NOT NULL DEFAULT '',
  cost_usd       REAL NOT NULL DEFAULT 0,
  cost_estimated INTEGER NOT NULL DEFAULT 0,
  result         TEXT NOT NULL DEFAULT '',
  worker_done    INTEGER NOT NULL DEFAULT 0,
  review_round   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX dispatches_state ON dispatches(state, id);
CREATE INDEX dispatches_task ON dispatches(task_id, id);

CREATE TABLE gates (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id     INTEGER NOT NULL DEFAULT 0,
  review_id   INTEGER NOT NULL DEFAULT 0,
  question    TEXT NOT NULL,
  options     TEXT NOT NULL DEFAULT '[]',
  status      TEXT NOT NULL,
  decision    TEXT NOT NULL DEFAULT '',
  created_ms  INTEGER NOT NULL,
  resolved_ms INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE cooldowns (
  profile  TEXT PRIMARY KEY,
  until_ms INTEGER NOT NULL,
  reason   TEXT NOT NULL
);
