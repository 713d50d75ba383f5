-- Feed items of 300 bytes with an id never sent before (random salt per run and thread, then a
-- counter), unsigned and not synthetic: every request takes the "accepted" path. Same bodies as
-- the shared reference script, plus the X-Provenance-Source header /ingest requires.
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local counter, salt
local headers = {
  ["Content-Type"] = "application/json",
  ["X-Provenance-Source"] = os.getenv("BENCH_PUBLISHER") or "bench",
}
local head, mid, tail = '{"id":"', '","content":"', '","is_synthetic":false,"metadata":{"source":"bench","lang":"en"}}'
function init(args)
  counter = 0
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919 + math.floor(os.clock() * 1e6))
  salt = string.format("%08x%04x", math.random(0, 0x7fffffff), math.random(0, 0xffff))
end

function request()
  counter = counter + 1
  local id = string.format("%s-%d-%d", salt, tid or 0, counter)
  local pad = string.rep("x", math.max(0, 300 - (#head + #id + #mid + #tail)))
  return wrk.format("POST", nil, headers, head .. id .. mid .. pad .. tail)
end

dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
