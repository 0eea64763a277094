-- The sessions of open tasks, for GetStatus's spend lines and the budget checks
-- (SpendStore::OpenSessions). That read walked every open task through tasks_status and read
-- its row to see whether it named a session; a store with thousands of queued tasks in no
-- session paid a row read for each at every status reread, on the loop. This index holds only
-- tasks that name a session, with the status and session the read needs, so it reads no task
-- row and nothing for a task without a session. A task without a session never enters it, so
-- its writes cost what they did; a task with one pays a page of this index when it is
-- inserted or deleted and when its status or session changes. Finished tasks stay in it (the
-- read seeks the open statuses only).
CREATE INDEX tasks_open_session ON tasks(status, session) WHERE session != '';
