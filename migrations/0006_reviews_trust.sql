-- A gate you can trust (issue 12): fix-round limits, the reviewed repository and commit,
-- --measure reviews, the open foreign findings carried into a new revision, the model a
-- reviewer round resolved to, and human sign-offs on a review's decision gate.
ALTER TABLE reviews ADD COLUMN max_fix_rounds INTEGER NOT NULL DEFAULT 2;
ALTER TABLE reviews ADD COLUMN fix_rounds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN repo TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN repo_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN measure INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN carried TEXT NOT NULL DEFAULT '[]';  -- reconciled, open, foreign

ALTER TABLE review_rounds ADD COLUMN model TEXT NOT NULL DEFAULT '';

CREATE TABLE review_signoffs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  review_id      INTEGER NOT NULL,
  revision       INTEGER NOT NULL,
  gate_id        INTEGER NOT NULL,
  caller_uid     INTEGER NOT NULL,
  caller_pid     INTEGER NOT NULL,
  caller_exe     TEXT NOT NULL,
  caller_tty     TEXT NOT NULL,
  caller_source  TEXT NOT NULL,             -- client (claimed by the client) | peer (kernel)
  human          INTEGER NOT NULL,          -- 1 only when the caller was at a terminal
  decision       TEXT NOT NULL,
  reason         TEXT NOT NULL DEFAULT '',
  verdict_before TEXT NOT NULL,
  verdict_after  TEXT NOT NULL,
  created_ms     INTEGER NOT NULL
);
CREATE INDEX review_signoffs_review ON review_signoffs(review_id, id);
