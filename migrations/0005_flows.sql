-- Flows: the daemon-driven loop worktree → implement → verify → review → ready, one durable
-- row per flow. step is the recorded state (domain/flow.h); task_id / review_id name what the
-- current step is waiting for, so a restarted daemon resumes the step instead of redoing it.
CREATE TABLE flows (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  idem_key       TEXT UNIQUE,
  title          TEXT NOT NULL DEFAULT '',
  brief          TEXT NOT NULL,
  repo           TEXT NOT NULL,
  base           TEXT NOT NULL DEFAULT '',  -- the ref asked for ('' = the repo's current branch)
  base_sha       TEXT NOT NULL DEFAULT '',  -- base resolved when the worktree was made
  head_sha       TEXT NOT NULL DEFAULT '',  -- the branch's last recorded commit
  branch         TEXT NOT NULL DEFAULT '',
  worktree       TEXT NOT NULL DEFAULT '',
  writer         TEXT NOT NULL,             -- writer profile
  writer_family  TEXT NOT NULL,
  verify         TEXT NOT NULL DEFAULT '[]',  -- JSON array of shell commands
  review_mode    TEXT NOT NULL DEFAULT 'ordinary',
  reviewers      TEXT NOT NULL DEFAULT '[]',  -- JSON array of profiles
  cap            INTEGER NOT NULL DEFAULT -1,
  max_fix_rounds INTEGER NOT NULL DEFAULT 2,
  ship           TEXT NOT NULL DEFAULT 'none',
  status         TEXT NOT NULL,             -- running | ready | needs_human | failed | cancelled
  step           TEXT NOT NULL,             -- worktree | implement | verify | review | <status>
  round          INTEGER NOT NULL DEFAULT 1,
  fix_rounds     INTEGER NOT NULL DEFAULT 0,
  task_id        INTEGER NOT NULL DEFAULT 0,  -- the current step's task (0 = not yet made)
  verify_index   INTEGER NOT NULL DEFAULT 0,
  review_id      INTEGER NOT NULL DEFAULT 0,
  review_round   INTEGER NOT NULL DEFAULT 0,  -- the round whose diff the review last saw
  fix_brief      TEXT NOT NULL DEFAULT '',    -- what the next fix round must address
  coordinator    TEXT NOT NULL DEFAULT 'coordinator',
  last_error     TEXT NOT NULL DEFAULT '',
  note           TEXT NOT NULL DEFAULT '',    -- the last step's outcome, for a person
  history        TEXT NOT NULL DEFAULT '[]',  -- [{step, round, at_ms, note, task_id}]
  cleaned        INTEGER NOT NULL DEFAULT 0,
  created_ms     INTEGER NOT NULL,
  updated_ms     INTEGER NOT NULL
);
CREATE INDEX flows_task ON flows(task_id);
CREATE INDEX flows_review ON flows(review_id);
CREATE INDEX flows_status ON flows(status);
