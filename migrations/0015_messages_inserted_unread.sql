-- A message row is inserted unread; no trigger runs for an insert.
--
-- Since 0014 a trigger ran for every insert into messages only to test its WHEN (a row
-- inserted already read bumps 'messages_read'). SQLite opens a trigger's frame before it
-- tests the WHEN: ~10k instructions of a Send's ~110k on the loop, and in a same-run A/B of
-- `bench --only wake` a wake took 8-18 µs longer with it. No writer of the daemon inserts a
-- read row; MessageStore::Insert writes one as an unread insert and then the update that marks
-- it read, in one savepoint, so messages_count_read counts it as it counts every other read.
-- Nothing else may insert into messages a row whose read is not 0.
DROP TRIGGER messages_count_insert_read;
