-- The avatar proxy (issue 17): a site may have its public feeds reference author photos through
-- the gateway's /avatar/<hash> instead of the author's host, so readers' browsers never contact it.

-- Whether the site's public feeds reference author photos through the proxy. Off by default.
ALTER TABLE sites ADD COLUMN avatar_proxy boolean NOT NULL DEFAULT false;

-- The lookup key of a mention's author photo: the lowercase hex SHA-256 of the photo URL's UTF-8
-- bytes; NULL without a photo. Kept by a trigger whenever the photo is written (a generated
-- column cannot use convert_to, which is not immutable), so no writer has to remember it.
ALTER TABLE mentions ADD COLUMN author_photo_hash text;

CREATE FUNCTION portcullis_author_photo_hash() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.author_photo_hash :=
    CASE WHEN NEW.author_photo IS NULL THEN NULL
         ELSE encode(sha256(convert_to(NEW.author_photo, 'UTF8')), 'hex') END;
  RETURN NEW;
END;
$$;

CREATE TRIGGER mentions_author_photo_hash
  BEFORE INSERT OR UPDATE OF author_photo ON mentions
  FOR EACH ROW EXECUTE FUNCTION portcullis_author_photo_hash();

UPDATE mentions
   SET author_photo_hash = encode(sha256(convert_to(author_photo, 'UTF8')), 'hex')
 WHERE author_photo IS NOT NULL;

-- FetchAvatar looks a hash up among shown mentions: one index probe.
CREATE INDEX mentions_author_photo_hash ON mentions (author_photo_hash)
  WHERE author_photo_hash IS NOT NULL;
