-- Every read path served by an index, and counts kept instead of counted.
--
-- Messages: few indexes (each one is a page written per commit), each ending in seq so that
-- "... ORDER BY seq LIMIT n" is a seek plus n entries once every column before seq is fixed.
-- store/message_query.cpp picks the index by name (INDEXED BY) and fixes those columns: from
-- the filter, or by running once per value — per type of the closed list, per read 0/1 — and
-- merging by seq (covering seeks: seq is in every index). Renaming an index breaks that on
-- purpose.
DROP INDEX IF EXISTS messages_unread;  -- (recipient, read, seq): subsumed by messages_to
CREATE INDEX messages_to ON messages(recipient, type, read, seq);
CREATE INDEX messages_from ON messages(sender, seq);
CREATE INDEX messages_type ON messages(type, read, seq);
-- messages_task (task_id, seq) exists since 0001.

-- Tasks and dispatches: the lookups the store and the status/spend lines make.
CREATE INDEX tasks_session ON tasks(session);
CREATE INDEX dispatches_terminal ON dispatches(terminal, id);
CREATE INDEX dispatches_created ON dispatches(created_ms);

-- Counters, maintained by triggers in the writing transaction itself (so they can never
-- disagree with the rows after a crash). GetStatus reads them instead of COUNT(*).
CREATE TABLE counters (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO counters(name, n) SELECT 'messages', COUNT(*) FROM messages;
INSERT INTO counters(name, n) SELECT 'messages_unread', COUNT(*) FROM messages WHERE read = 0;
INSERT INTO counters(name, n) SELECT 'handles_open', COUNT(*) FROM handles WHERE closed = 0;
INSERT INTO counters(name, n)
  SELECT 'terminals_open', COUNT(*) FROM terminals WHERE state != 'closed';
INSERT INTO counters(name, n) SELECT 'tasks_' || status, COUNT(*) FROM tasks GROUP BY status;
INSERT INTO counters(name, n)
  SELECT 'dispatches_' || state, COUNT(*) FROM dispatches GROUP BY state;

CREATE TRIGGER messages_count_insert AFTER INSERT ON messages BEGIN
  UPDATE counters SET n = n + 1 WHERE name = 'messages';
  UPDATE counters SET n = n + 1 WHERE name = 'messages_unread' AND NEW.read = 0;
END;
CREATE TRIGGER messages_count_read AFTER UPDATE OF read ON messages
  WHEN (OLD.read = 0) != (NEW.read = 0) BEGIN
  UPDATE counters SET n = n + (NEW.read = 0) - (OLD.read = 0) WHERE name = 'messages_unread';
END;
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'messages';
  UPDATE counters SET n = n - 1 WHERE name = 'messages_unread' AND OLD.read = 0;
END;

CREATE TRIGGER handles_count_insert AFTER INSERT ON handles WHEN NEW.closed = 0 BEGIN
  UPDATE counters SET n = n + 1 WHERE name = 'handles_open';
END;
CREATE TRIGGER handles_count_update AFTER UPDATE OF closed ON handles
  WHEN (OLD.closed = 0) != (NEW.closed = 0) BEGIN
  UPDATE counters SET n = n + (NEW.closed = 0) - (OLD.closed = 0) WHERE name = 'handles_open';
END;
CREATE TRIGGER handles_count_delete AFTER DELETE ON handles WHEN OLD.closed = 0 BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'handles_open';
END;

CREATE TRIGGER terminals_count_insert AFTER INSERT ON terminals WHEN NEW.state != 'closed' BEGIN
  UPDATE counters SET n = n + 1 WHERE name = 'terminals_open';
END;
CREATE TRIGGER terminals_count_update AFTER UPDATE OF state ON terminals
  WHEN (OLD.state != 'closed') != (NEW.state != 'closed') BEGIN
  UPDATE counters SET n = n + (NEW.state != 'closed') - (OLD.state != 'closed')
    WHERE name = 'terminals_open';
END;
CREATE TRIGGER terminals_count_delete AFTER DELETE ON terminals WHEN OLD.state != 'closed' BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'terminals_open';
END;

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
  INSERT INTO counters(name, n) VALUES ('tasks_' || NEW.status, 1)
    ON CONFLICT(name) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_count_update AFTER UPDATE OF status ON tasks
  WHEN OLD.status != NEW.status BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'tasks_' || OLD.status;
  INSERT INTO counters(name, n) VALUES ('tasks_' || NEW.status, 1)
    ON CONFLICT(name) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'tasks_' || OLD.status;
END;

CREATE TRIGGER dispatches_count_insert AFTER INSERT ON dispatches BEGIN
  INSERT INTO counters(name, n) VALUES ('dispatches_' || NEW.state, 1)
    ON CONFLICT(name) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER dispatches_count_update AFTER UPDATE OF state ON dispatches
  WHEN OLD.state != NEW.state BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'dispatches_' || OLD.state;
  INSERT INTO counters(name, n) VALUES ('dispatches_' || NEW.state, 1)
    ON CONFLICT(name) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER dispatches_count_delete AFTER DELETE ON dispatches BEGIN
  UPDATE counters SET n = n - 1 WHERE name = 'dispatches_' || OLD.state;
END;
