-- A sender's messages by type and read state, like a recipient's (0007). With (sender, seq)
-- a filter on the sender and a type or unread state walked every message of that sender to
-- find the few that match (a worker's rare escalations among its heartbeats), and a filter
-- on both the sender and the recipient could only walk the recipient's. Now either can drive
-- such a query with one seek per type and read state; store/message_store.cpp picks the one
-- with fewer entries after the cursor.
DROP INDEX messages_from;
CREATE INDEX messages_from ON messages(sender, type, read, seq);
