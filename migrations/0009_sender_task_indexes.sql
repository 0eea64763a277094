-- A sender's and a task's messages by type and read state, like a recipient's (0007). With
-- (sender, seq) and (task_id, seq), a filter on a sender or a task and a type or unread state
-- walked every message of that sender or task to find the few that match: a worker's rare
-- escalations among its heartbeats, or the worker_done of a task whose worker had flooded it
-- with messages (any Wait for it from seq 0 then held the loop for the whole walk). And a
-- filter on both the sender and the recipient could only walk the recipient's. Now each of
-- them drives such a query with one seek per type and read state; store/message_store.cpp
-- lets the sender drive when it has fewer entries after the cursor (counted up to 128).
DROP INDEX messages_from;
CREATE INDEX messages_from ON messages(sender, type, read, seq);
DROP INDEX messages_task;
CREATE INDEX messages_task ON messages(task_id, type, read, seq);
