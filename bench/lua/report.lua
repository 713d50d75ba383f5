-- The machine-readable summary line bench/load reads, exactly as the shared reference scripts
-- print it (latencies in microseconds; non2xx3xx is wrk's count of answers with status >= 400).
function done(summary, latency, requests)
  local s = summary
  local secs = s.duration / 1e6
  io.write(string.format(
    "WRKRESULT requests=%d duration_s=%.2f rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d non2xx3xx=%d err_connect=%d err_read=%d err_write=%d err_timeout=%d\n",
    s.requests, secs, s.requests / secs,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    s.errors.status, s.errors.connect, s.errors.read, s.errors.write, s.errors.timeout))
end
