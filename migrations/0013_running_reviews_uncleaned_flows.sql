-- Two reads that walked a whole table on the loop now seek an index that holds only the rows
-- they want.
--
-- At start, ReviewRounds::Resume read every review (up to 100,000, each with its artifact, a
-- whole diff) to find the few still running. This index holds only the running ones; a review
-- enters it when it starts and leaves it when it is done.
CREATE INDEX reviews_running ON reviews(status) WHERE status = 'running';

-- Cleaning flows (the retention pass, `conclave flow clean` without an id) read every flow,
-- cleaned ones included, and stopped at 100,000: a flow past that was never cleaned. This
-- index holds only the flows not cleaned yet, by status and last change, so the retention
-- pass seeks the ended ones older than its cutoff, and a flow leaves it once cleaned.
CREATE INDEX flows_uncleaned ON flows(status, updated_ms) WHERE cleaned = 0;
