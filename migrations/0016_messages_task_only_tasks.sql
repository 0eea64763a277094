-- A task's index holds only the messages of a task.
--
-- Since 0001 every message had an entry in messages_task, the many sent outside any task
-- (task_id 0: handles talking to each other) too. No query reads those entries: a filter's
-- task ids name tasks, and 0 names none (MessagingService::ValidateFilter refuses it since
-- this migration), so the task arms of store/message_query.cpp say `task_id != 0`, the
-- index's own condition, for SQLite to take it. Callgrind of the loop, one client sending
-- without a task: 6.4k instructions fewer per Send (of ~90k), one index descent and insert
-- fewer, and one WAL frame fewer per commit.
DROP INDEX messages_task;
CREATE INDEX messages_task ON messages(task_id, type, read, seq) WHERE task_id != 0;
