-- Spend kept instead of summed. As a dispatch's cost changes, it is added to its family's total
-- for the UTC day the dispatch was created and to its task's session's total, by triggers in
-- the writing transaction itself (like the counters of 0007, so they never disagree with the
-- rows after a crash). The budget checks and GetStatus's spend lines read those rows instead of
-- summing the day's dispatches, a walk that grew with every dispatch of the day and ran on the
-- loop at every status call and every capped dispatch. Amounts are whole micro-dollars, so
-- adding and taking away never drifts.
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
  SELECT created_ms / 86400000, family, SUM(CAST(ROUND(cost_usd * 1e6) AS INTEGER))
  FROM dispatches WHERE family != '' GROUP BY 1, 2;
INSERT INTO spend_session(session, micros)
  SELECT t.session, COALESCE(SUM(CAST(ROUND(d.cost_usd * 1e6) AS INTEGER)), 0)
  FROM tasks t LEFT JOIN dispatches d ON d.task_id = t.id WHERE t.session != ''
  GROUP BY t.session;

-- A session is listed from its first task on, spent or not.
CREATE TRIGGER spend_task_insert AFTER INSERT ON tasks WHEN NEW.session != '' BEGIN
  INSERT OR IGNORE INTO spend_session(session, micros) VALUES (NEW.session, 0);
END;

-- A family is listed for a day from its first dispatch that day on, spent or not. The row
-- exists after the first: later dispatches only look it up (no page written for them).
CREATE TRIGGER spend_dispatch_insert AFTER INSERT ON dispatches BEGIN
  INSERT OR IGNORE INTO spend_family_day(day, family, micros)
    SELECT NEW.created_ms / 86400000, NEW.family, 0 WHERE NEW.family != '';
  UPDATE spend_family_day SET micros = micros + CAST(ROUND(NEW.cost_usd * 1e6) AS INTEGER)
    WHERE NEW.cost_usd != 0 AND day = NEW.created_ms / 86400000 AND family = NEW.family;
  UPDATE spend_session SET micros = micros + CAST(ROUND(NEW.cost_usd * 1e6) AS INTEGER)
    WHERE NEW.cost_usd != 0 AND session = (SELECT session FROM tasks WHERE id = NEW.task_id);
END;

-- A dispatch's cost, or its family (set when it reaches a terminal), changed. Its day and task
-- never change (the store's update does not name them).
CREATE TRIGGER spend_dispatch_update AFTER UPDATE OF family, cost_usd ON dispatches
  WHEN OLD.family != NEW.family OR OLD.cost_usd != NEW.cost_usd BEGIN
  UPDATE spend_family_day SET micros = micros - CAST(ROUND(OLD.cost_usd * 1e6) AS INTEGER)
    WHERE OLD.cost_usd != 0 AND day = OLD.created_ms / 86400000 AND family = OLD.family;
  INSERT OR IGNORE INTO spend_family_day(day, family, micros)
    SELECT NEW.created_ms / 86400000, NEW.family, 0 WHERE NEW.family != '';
  UPDATE spend_family_day SET micros = micros + CAST(ROUND(NEW.cost_usd * 1e6) AS INTEGER)
    WHERE NEW.cost_usd != 0 AND day = NEW.created_ms / 86400000 AND family = NEW.family;
  UPDATE spend_session
    SET micros = micros + CAST(ROUND(NEW.cost_usd * 1e6) AS INTEGER)
                        - CAST(ROUND(OLD.cost_usd * 1e6) AS INTEGER)
    WHERE OLD.cost_usd != NEW.cost_usd
      AND session = (SELECT session FROM tasks WHERE id = NEW.task_id);
END;
