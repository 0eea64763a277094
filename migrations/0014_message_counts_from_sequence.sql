-- The message counts without a trigger on every insert.
--
-- Since 0007 a trigger on every insert into messages updated two counters ('messages',
-- 'messages_unread'), and dirtied the counters' page, written to the WAL at every commit.
-- Callgrind of the loop: a Send's insert and commit took 12.5k instructions more than they
-- do now (of ~125k a Send costs the loop), a dispatch's two inserts 15k more.
--
-- Every row inserted already takes the next seq, and AUTOINCREMENT keeps the highest seq ever
-- given in sqlite_sequence, in the same transaction (a statement or savepoint undone undoes
-- it too). So the count of rows is that seq less the seqs whose row is gone, and the unread
-- count is that less the rows marked read:
--   messages = sqlite_sequence's seq - counters['messages_gone']
--   unread   = messages - counters['messages_read']
-- Only deletes (retention) and reads change a counter now; an insert changes one only when
-- its row is already read. (That trigger still runs for every insert, to test its WHEN:
-- ~10k instructions, what SQLite's frame for a trigger program costs.)
-- Nothing may insert a message with an explicit seq: it would skip seqs that never had a row.
-- A later migration that rebuilds the table must set messages_gone again from its rows.
INSERT INTO counters(name, n)
  SELECT 'messages_gone',
         COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0) -
         COALESCE((SELECT n FROM counters WHERE name = 'messages'), 0);
INSERT INTO counters(name, n)
  SELECT 'messages_read',
         COALESCE((SELECT n FROM counters WHERE name = 'messages'), 0) -
         COALESCE((SELECT n FROM counters WHERE name = 'messages_unread'), 0);
DELETE FROM counters WHERE name IN ('messages', 'messages_unread');

DROP TRIGGER messages_count_insert;
DROP TRIGGER messages_count_read;
DROP TRIGGER messages_count_delete;
CREATE TRIGGER messages_count_insert_read AFTER INSERT ON messages WHEN NEW.read != 0 BEGIN
  UPDATE counters SET n = n + 1 WHERE name = 'messages_read';
END;
CREATE TRIGGER messages_count_read AFTER UPDATE OF read ON messages
  WHEN (OLD.read != 0) != (NEW.read != 0) BEGIN
  UPDATE counters SET n = n + (NEW.read != 0) - (OLD.read != 0) WHERE name = 'messages_read';
END;
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN
  UPDATE counters SET n = n + 1 WHERE name = 'messages_gone';
  UPDATE counters SET n = n - 1 WHERE name = 'messages_read' AND OLD.read != 0;
END;
