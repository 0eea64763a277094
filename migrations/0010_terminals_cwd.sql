-- Terminals by working directory: a writer's dispatch asks whether an --exclusive terminal
-- is open in its terminal's directory, and if so which dispatches run there
-- (TerminalStore::RunningInExclusiveDir). Without this index that read walked every terminal
-- ever made (closed ones stay; a flow makes one per run) on every writer's dispatch; with it,
-- a directory without an exclusive terminal is one seek. UPDATEs of a terminal (its state,
-- its dispatch) name neither column, so they never touch this index.
CREATE INDEX terminals_cwd ON terminals(cwd, exclusive);
