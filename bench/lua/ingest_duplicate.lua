-- One 300-byte feed item sent again and again: after the first request every one is a duplicate
-- (answered from the stored decision). Same body as the shared reference script, plus the
-- X-Provenance-Source header /ingest requires.
local head = '{"id":"dup-item-1","content":"'
local tail = '","is_synthetic":false,"metadata":{"source":"bench","lang":"en"}}'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Provenance-Source"] = os.getenv("BENCH_PUBLISHER") or "bench"
wrk.body = head .. string.rep("x", 300 - #head - #tail) .. tail
assert(#wrk.body == 300, "body must be 300 bytes")

dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
