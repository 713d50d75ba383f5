-- Issue 15: a verified mention's content (the sanitized HTML and the plain text of a source's
-- e-content, up to 32 KiB and 10,000 bytes) is compressed with lz4 instead of PostgreSQL's
-- default pglz, whose compressor was the largest single item of the database's CPU profile while
-- verifying (bench/verify). lz4 compresses several times faster for a slightly larger result.
-- Applies to values stored from now on; values already stored stay as they are (pglz) and read
-- as before. Needs a server built with lz4 (Debian's and the common managed ones are).
ALTER TABLE mentions
  ALTER COLUMN content_html SET COMPRESSION lz4,
  ALTER COLUMN content_text SET COMPRESSION lz4;
