-- The retention sweeper (issue 17) deletes outbound deliveries that ended (delivered, or failed
-- for good) once older than --delivery_retention, oldest first, in bounded batches.
CREATE INDEX deliveries_finished_idx ON deliveries (created_at) WHERE state <> 'pending';
