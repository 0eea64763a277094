-- A writer dispatch's starting point: HEAD when its worker started, so its claimed changes are
-- judged against what it started from (commits it made since count as changes).
ALTER TABLE dispatches ADD COLUMN start_head TEXT NOT NULL DEFAULT '';
