-- Handles (addressable names) and the message log. One row per delivery: a group send
-- writes one row per recipient sharing a thread id. seq is the global event cursor.
CREATE TABLE handles (
  name       TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  closed     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE messages (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  created_ms  INTEGER NOT NULL,
  type        TEXT NOT NULL,
  priority    TEXT NOT NULL,
  sender      TEXT NOT NULL,
  recipient   TEXT NOT NULL,
  subject     TEXT NOT NULL,
  body        TEXT NOT NULL,
  payload     TEXT NOT NULL DEFAULT '',
  task_id     INTEGER NOT NULL DEFAULT 0,
  dispatch_id INTEGER NOT NULL DEFAULT 0,
  thread_id   TEXT NOT NULL,
  reply_to    INTEGER NOT NULL DEFAULT 0,
  read        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX messages_unread ON messages(recipient, read, seq);
CREATE INDEX messages_task ON messages(task_id, seq);
