-- The durable verification queue. A mention has at most one job at a time (queued or running):
-- a repeat submission never queues a second one. Workers claim due jobs with
-- FOR UPDATE SKIP LOCKED and hold them under a lease; a job whose lease expired (its worker
-- died) is due again. A finished job is deleted, unless `rerun` asks for one more run (the
-- mention was re-submitted while the job was running).
CREATE TABLE verification_jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  mention_id uuid NOT NULL UNIQUE REFERENCES mentions (id) ON DELETE CASCADE,
  -- VERIFY: a new (or restarted) mention; REVERIFY: a VERIFIED mention submitted again.
  kind text NOT NULL CHECK (kind IN ('VERIFY', 'REVERIFY')),
  -- Not claimed before this time (retries are scheduled in the future).
  run_at timestamptz NOT NULL DEFAULT now(),
  -- Claims so far; a claim counts even when its worker dies.
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- Why the last attempt did not finish the job (a reason code), for operators.
  last_error text,
  lease_owner text,
  lease_expires_at timestamptz,
  rerun boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX verification_jobs_due_idx ON verification_jobs (run_at);
CREATE INDEX verification_jobs_lease_owner_idx ON verification_jobs (lease_owner)
  WHERE lease_owner IS NOT NULL;

-- Mentions stored before the queue existed are waiting for verification too.
INSERT INTO verification_jobs (mention_id, kind)
SELECT id, 'VERIFY' FROM mentions WHERE state = 'PENDING';
