-- One webmention pair, sent again and again: after the first request every one is a repeat of a
-- PENDING pair (answered from the existing row, nothing queued).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "source=https%3A%2F%2Fblog.example.net%2Frepeat&target=https%3A%2F%2Fexample.com%2Fnotes%2F2024%2Fhello-world"

dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
