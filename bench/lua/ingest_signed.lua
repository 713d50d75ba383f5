-- Signed (v1a, Ed25519) synthetic feed items, read from the file BENCH_SIGNED_REQUESTS written by
-- bench/sign_requests.js just before the run: one request per line, "id<TAB>timestamp<TAB>
-- signature<TAB>body". Each thread takes every n-th line, so every request is a new item until
-- the file runs out (then it starts over: duplicates, counted by bench/load).
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local lines, index
local publisher = os.getenv("BENCH_PUBLISHER") or "bench"
function init(args)
  local n = tonumber(os.getenv("BENCH_THREADS") or "2")
  lines, index = {}, 0
  local i = 0
  for line in io.lines(os.getenv("BENCH_SIGNED_REQUESTS")) do
    if i % n == (tid or 0) then
      local id, ts, sig, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      lines[#lines + 1] = wrk.format("POST", nil, {
        ["Content-Type"] = "application/json",
        ["X-Provenance-Source"] = publisher,
        ["webhook-id"] = id,
        ["webhook-timestamp"] = ts,
        ["X-Provenance-Signature"] = sig,
      }, body)
    end
    i = i + 1
  end
  assert(#lines > 0, "no signed requests for thread " .. tostring(tid))
end

function request()
  index = index % #lines + 1
  return lines[index]
end

dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
