-- The two BEFORE triggers on mentions are PL/pgSQL: every call copies the whole new row, content
-- included (a 20 KiB page's content is copied twice per trigger, before TOAST compresses it):
-- ~9% of PostgreSQL's CPU in bench/verify's profile.
-- Both now run only when the row would be wrong without them: the workers' outcome statements
-- (pg_job_store.cc) stamp the change and hash the photo themselves, and the triggers stay
-- for every other writer, so what 0009 and 0015 promise ("no writer has to remember it") holds.

-- An UPDATE that did not draw a new change_seq is stamped by the trigger. A statement that stamps
-- itself sets change_xid = pg_current_xact_id() and change_seq = nextval('mention_change_seq'),
-- which is always a new number, so the WHEN is false for it.
DROP TRIGGER mentions_stamp_change ON mentions;
CREATE TRIGGER mentions_stamp_change BEFORE UPDATE ON mentions
  FOR EACH ROW WHEN (NEW.change_seq IS NOT DISTINCT FROM OLD.change_seq)
  EXECUTE FUNCTION mentions_stamp_change();

-- The photo's hash: the trigger and the statements that hash themselves call this (a one-line SQL
-- function, inlined where a statement is planned).
CREATE FUNCTION portcullis_photo_hash(photo text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT encode(sha256(convert_to(photo, 'UTF8')), 'hex')
$$;
CREATE OR REPLACE FUNCTION portcullis_author_photo_hash() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.author_photo_hash := portcullis_photo_hash(NEW.author_photo);
  RETURN NEW;
END;
$$;

-- The trigger runs only when the row's hash is not its photo's (the WHEN checks the invariant
-- itself: hashing a URL is cheap, the call and its row copies are not). A new PENDING pair has
-- neither, so the intake's inserts no longer call it at all. The WHEN spells the hash out instead
-- of calling portcullis_photo_hash: PostgreSQL plans a trigger's WHEN again for every statement,
-- and inlining a SQL function there parses its body each time (~3% of the database's CPU in
-- bench/verify).
DROP TRIGGER mentions_author_photo_hash ON mentions;
CREATE TRIGGER mentions_author_photo_hash
  BEFORE INSERT OR UPDATE OF author_photo, author_photo_hash ON mentions
  FOR EACH ROW WHEN (NEW.author_photo_hash IS DISTINCT FROM
    encode(sha256(convert_to(NEW.author_photo, 'UTF8')), 'hex'))
  EXECUTE FUNCTION portcullis_author_photo_hash();
