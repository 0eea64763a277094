-- Cross-family reviews: the review, its rounds (each a real dispatch), and the atomic
-- one-Strong-review-per-session guard.
CREATE TABLE reviews (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  mode          TEXT NOT NULL,
  writer_family TEXT NOT NULL,
  artifact_kind TEXT NOT NULL,
  artifact      BLOB NOT NULL,
  artifact_sha  TEXT NOT NULL,
  revision      INTEGER NOT NULL DEFAULT 1,
  status        TEXT NOT NULL,            -- running | done
  verdict       TEXT NOT NULL DEFAULT '',
  termination   TEXT NOT NULL DEFAULT '',
  reason        TEXT NOT NULL DEFAULT '',
  blocked_by    TEXT NOT NULL DEFAULT '',
  cap           INTEGER NOT NULL,
  session       TEXT NOT NULL DEFAULT '',
  coordinator   TEXT NOT NULL,
  idem_key      TEXT UNIQUE,
  plan          TEXT NOT NULL DEFAULT '{}',  -- primary, challengers, lines (profile+family)
  budget_usd    REAL NOT NULL DEFAULT 0,
  gate_id       INTEGER NOT NULL DEFAULT 0,
  findings      TEXT NOT NULL DEFAULT '[]',  -- reconciled, with provenance
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL
);

CREATE TABLE review_rounds (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  review_id   INTEGER NOT NULL,
  revision    INTEGER NOT NULL,
  round       INTEGER NOT NULL,
  role        TEXT NOT NULL,               -- primary | challenger | line
  profile     TEXT NOT NULL,
  family      TEXT NOT NULL,
  task_id     INTEGER NOT NULL DEFAULT 0,
  state       TEXT NOT NULL,               -- running | done | malformed | failed
  findings    TEXT NOT NULL DEFAULT '[]',
  malformed   INTEGER NOT NULL DEFAULT 0,  -- malformed outputs seen (reliability)
  error       TEXT NOT NULL DEFAULT '',
  cost_usd    REAL NOT NULL DEFAULT 0,
  created_ms  INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX review_rounds_review ON review_rounds(review_id, revision, round);
CREATE INDEX review_rounds_task ON review_rounds(task_id);

CREATE TABLE strong_sessions (
  session    TEXT PRIMARY KEY,
  review_id  INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
