-- Webmention form POSTs, each with a source never sent before (a random salt per run and thread,
-- then a counter), all to one registered target: every request takes the "new pair" path
-- (row + job committed before the 202). Each source is on a host of its own, as when many sites
-- send, so that the verifier's per-source-host admission limit (on at its default) is checked
-- but never reached. Used for Portcullis and the Express reference alike.
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local counter, salt
local headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
function init(args)
  counter = 0
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919 + math.floor(os.clock() * 1e6))
  salt = string.format("%08x%04x", math.random(0, 0x7fffffff), math.random(0, 0xffff))
end

function request()
  counter = counter + 1
  local body = string.format(
    "source=https%%3A%%2F%%2Fblog%d-%s-%d.example.net%%2Fpost&target=https%%3A%%2F%%2Fexample.com%%2Fnotes%%2F2024%%2Fhello-world",
    tid or 0, salt, counter)
  return wrk.format("POST", nil, headers, body)
end

dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
