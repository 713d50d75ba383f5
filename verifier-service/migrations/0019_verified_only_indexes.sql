-- Three of the mentions table's fifteen indexes were written for every row but read only for
-- VERIFIED ones: every new pair paid 11 index entries, and every outcome as many (issues 15 and
-- 21). An audit EXPLAINed every statement that reads mentions (40 statements, 137 cases of
-- parameters and plan modes, 300,000 rows with one site of 150,000, a FAILED flood on a site
-- and on a target, PENDING made rare): with the two partial indexes below none gets a sequential
-- scan or a new sort, and a new PENDING pair writes 8 index entries instead of 11.

-- By target, state-leading: every reader that filters by state on a target filters VERIFIED
-- (the gateway's feed, count.json, /api/mentions.jf2 of targets), so the index holds VERIFIED
-- rows only. It keeps those readers flat when a target is flooded with FAILED mentions, which
-- the state-free mentions_target_recent_idx alone does not (30,000 FAILED on one target: the
-- feed 1.5 → 27 ms). The received-order index of targets is left without a reader.
DROP INDEX mentions_target_received_idx;
DROP INDEX mentions_target_listing_idx;
CREATE INDEX mentions_target_verified_idx ON mentions (target_hash, updated_at DESC, id)
  WHERE state = 'VERIFIED';

-- /api/mentions.jf2 of a site in received order (wm_id) and since_id: public, VERIFIED only.
-- Without any such index its generic plan on a site of 150,000 took 2.8 s instead of 1 ms.
DROP INDEX mentions_site_received_idx;
CREATE INDEX mentions_site_verified_received_idx ON mentions (target_domain, wm_id)
  WHERE state = 'VERIFIED';
