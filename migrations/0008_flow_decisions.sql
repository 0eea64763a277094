-- A flow that stops for a person (needs_human) opens a decision gate over the flow itself:
-- resolving it asks for another round or cancels the flow.
ALTER TABLE gates ADD COLUMN flow_id INTEGER NOT NULL DEFAULT 0;
-- flow start --budget-usd: what the flow's dispatches may spend in all (0 = no cap).
ALTER TABLE flows ADD COLUMN budget_usd REAL NOT NULL DEFAULT 0;
-- terminal create --exclusive: one writer at a time in its working directory.
ALTER TABLE terminals ADD COLUMN exclusive INTEGER NOT NULL DEFAULT 0;
