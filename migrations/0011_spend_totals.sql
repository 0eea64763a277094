-- Spend kept instead of summed. As a dispatch's cost changes, it is added to its family's total
-- for the UTC day the dispatch was created and to its task's session's total, by triggers in
-- the writing transaction itself (like the counters of 0007, so they never disagree with the
-- rows after a crash). The budget checks and GetStatus's spend lines read those rows instead of
-- summing the day's dispatches, a walk that grew with every dispatch of the day and ran on the
-- loop at every status call and every capped dispatch. Amounts are whole micro-dollars, so
-- adding and taking away never drifts; a cost is counted within ±$1e9 (a parser's absurd
-- figure must not overflow a total). Rows are only added with ON CONFLICT DO NOTHING, which
-- an outer statement's conflict clause cannot override (OR IGNORE can).
CREATE TABLE spend_family_day (
  day    INTEGER NOT NULL,  -- the dispatches' created_ms / 86400000 (their UTC day)
  family TEXT NOT NULL,
  micros INTEGER NOT NULL,
  PRIMARY KEY (day, family)
) WITHOUT ROWID;

CREATE TABLE spend_session (
  session TEXT PRIMARY KEY,
  micros  INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO spend_family_day(day, family, micros)
  SELECT created_ms / 86400000, family, SUM(CAST(ROUND(MIN(MAX(cost_usd, -1e9), 1e9) * 1e6) AS INTEGER))
  FROM dispatches WHERE family != '' GROUP BY 1, 2;
INSERT INTO spend_session(session, micros)
  SELECT t.session, COALESCE(SUM(CAST(ROUND(MIN(MAX(d.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)), 0)
  FROM tasks t LEFT JOIN dispatches d ON d.task_id = t.id WHERE t.session != ''
  GROUP BY t.session;

-- A session is listed from its first task on, spent or not.
CREATE TRIGGER spend_task_insert AFTER INSERT ON tasks WHEN NEW.session != '' BEGIN
  INSERT INTO spend_session(session, micros) VALUES (NEW.session, 0) ON CONFLICT DO NOTHING;
END;

-- A task moved to another session takes what its dispatches spent with it (the store never
-- does this; the totals must hold whatever writes them).
CREATE TRIGGER spend_task_session AFTER UPDATE OF session ON tasks
  WHEN OLD.session != NEW.session BEGIN
  INSERT INTO spend_session(session, micros) SELECT NEW.session, 0 WHERE NEW.session != ''
    ON CONFLICT DO NOTHING;
  UPDATE spend_session SET micros = micros + (SELECT COALESCE(SUM(CAST(ROUND(MIN(MAX(cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)), 0)
    FROM dispatches WHERE task_id = NEW.id) * ((session = NEW.session) - (session = OLD.session))
    WHERE session IN (OLD.session, NEW.session);
END;

-- A family is listed for a day from its first dispatch that day on, spent or not. The row
-- exists after the first: later dispatches only look it up (no page written for them). A
-- dispatch is nearly always inserted before it costs anything: the second trigger, whose WHEN
-- is checked before its body is entered, then costs nothing.
CREATE TRIGGER spend_dispatch_insert AFTER INSERT ON dispatches WHEN NEW.family != '' BEGIN
  INSERT INTO spend_family_day(day, family, micros)
    VALUES (NEW.created_ms / 86400000, NEW.family, 0) ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER spend_dispatch_insert_cost AFTER INSERT ON dispatches WHEN NEW.cost_usd != 0
BEGIN
  -- (The order SQLite runs two triggers of one event in is not promised: the row may not be
  -- there yet.)
  INSERT INTO spend_family_day(day, family, micros)
    SELECT NEW.created_ms / 86400000, NEW.family, 0 WHERE NEW.family != ''
    ON CONFLICT DO NOTHING;
  UPDATE spend_family_day SET micros = micros + CAST(ROUND(MIN(MAX(NEW.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE day = NEW.created_ms / 86400000 AND family = NEW.family;
  UPDATE spend_session SET micros = micros + CAST(ROUND(MIN(MAX(NEW.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE session = (SELECT session FROM tasks WHERE id = NEW.task_id);
END;

-- A dispatch's cost, or its family (set when it reaches a terminal), changed; its day and task
-- never do in the store, but are followed all the same. The store names family and cost_usd
-- only when one of them changes (a trigger named in an UPDATE runs for every row it touches).
CREATE TRIGGER spend_dispatch_update
  AFTER UPDATE OF family, cost_usd, created_ms, task_id ON dispatches
  WHEN OLD.family != NEW.family OR OLD.cost_usd != NEW.cost_usd
    OR OLD.created_ms != NEW.created_ms OR OLD.task_id != NEW.task_id BEGIN
  UPDATE spend_family_day SET micros = micros - CAST(ROUND(MIN(MAX(OLD.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE OLD.cost_usd != 0 AND day = OLD.created_ms / 86400000 AND family = OLD.family;
  INSERT INTO spend_family_day(day, family, micros)
    SELECT NEW.created_ms / 86400000, NEW.family, 0 WHERE NEW.family != ''
    ON CONFLICT DO NOTHING;
  UPDATE spend_family_day SET micros = micros + CAST(ROUND(MIN(MAX(NEW.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE NEW.cost_usd != 0 AND day = NEW.created_ms / 86400000 AND family = NEW.family;
  UPDATE spend_session SET micros = micros - CAST(ROUND(MIN(MAX(OLD.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE (OLD.cost_usd != NEW.cost_usd OR OLD.task_id != NEW.task_id)
      AND session = (SELECT session FROM tasks WHERE id = OLD.task_id);
  UPDATE spend_session SET micros = micros + CAST(ROUND(MIN(MAX(NEW.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE (OLD.cost_usd != NEW.cost_usd OR OLD.task_id != NEW.task_id)
      AND session = (SELECT session FROM tasks WHERE id = NEW.task_id);
END;

-- Nothing deletes dispatches today; if something does, its spend goes with it.
CREATE TRIGGER spend_dispatch_delete AFTER DELETE ON dispatches WHEN OLD.cost_usd != 0 BEGIN
  UPDATE spend_family_day SET micros = micros - CAST(ROUND(MIN(MAX(OLD.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE day = OLD.created_ms / 86400000 AND family = OLD.family;
  UPDATE spend_session SET micros = micros - CAST(ROUND(MIN(MAX(OLD.cost_usd, -1e9), 1e9) * 1e6) AS INTEGER)
    WHERE session = (SELECT session FROM tasks WHERE id = OLD.task_id);
END;
