# Turns bench/load's results (one line per wrk run: "row|connections rps p50_us p99_us non2xx
# requests cpu_us_per_request rss_mib" and five stages' CPU µs per request) into the table:
# medians over rounds, each Portcullis row as a ratio to the reference measured in the same run,
# then the Portcullis rows' CPU per request by stage.
function median(list,    n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  if (n == 0) return 0
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
  key = $1
  rps[key] = rps[key] " " $2; p50[key] = p50[key] " " $3; p99[key] = p99[key] " " $4
  non2xx[key] += $5; requests[key] += $6; cpu[key] = cpu[key] " " $7; rss[key] = rss[key] " " $8
  for (i = 1; i <= 5; i++) stage[key, i] = stage[key, i] " " $(8 + i)
  runs[key]++
}
function stages(label, key,    i, s, total, line) {
  if (!(key in runs)) return
  line = sprintf("%-28s %5s", label, c)
  for (i = 1; i <= 5; i++) {
    s = median(stage[key, i]); total += s; line = line sprintf(" %12.1f", s)
  }
  print line sprintf(" %9.1f", total)
}
function row(label, key, ref,    r, rr, line) {
  if (!(key in runs)) { printf "%-28s %5s  %s\n", label, c, "n/a (not measured: " key " missing)"; return }
  r = median(rps[key])
  line = sprintf("%-28s %5s %10.0f %8.2f %9.2f %8d %9.1f %8.1f", label, c, r,
    median(p50[key]) / 1000, median(p99[key]) / 1000, non2xx[key], median(cpu[key]), median(rss[key]))
  if (ref != "" && (ref in runs)) {
    rr = median(rps[ref])
    line = line sprintf("   %6.2fx %-10s", rr > 0 ? r / rr : 0, refname[ref])
    line = line sprintf(" p99 %.3fx", median(p99[ref]) > 0 ? median(p99[key]) / median(p99[ref]) : 0)
  }
  print line
}
END {
  refname["express-new|64"] = refname["express-new|256"] = "express"
  refname["go-dup|64"] = refname["go-dup|256"] = "go-dup"
  refname["go-unique|64"] = refname["go-unique|256"] = "go-unique"
  refname["wm-new|64"] = refname["wm-new|256"] = "empty db"
  printf "%-28s %5s %10s %8s %9s %8s %9s %8s   %s\n", "row", "conns", "req/s", "p50 ms",
    "p99 ms", "non-2xx", "CPU us/r", "RSS MiB", "ratio to reference (req/s; p99)"
  n = split(ENVIRON["BENCH_CONNECTIONS"], conns, " ")
  for (i = 1; i <= n; i++) {
    c = conns[i]
    row("nginx ceiling (GET)", "nginx|" c, "")
    if (("wm-read|" c) in runs) {  # BENCH_ROWS=read: the public read path beside the ceiling
      refname["nginx|" c] = "nginx"
      row("read /api/mentions.jf2", "wm-read|" c, "nginx|" c)
      row("read /api/count.json", "wm-count|" c, "nginx|" c)
      continue
    }
    row("express webmention", "express-new|" c, "")
    row("go ingest unique", "go-unique|" c, "")
    row("go ingest duplicate", "go-dup|" c, "")
    row("webmention new pairs", "wm-new|" c, "express-new|" c)
    row("webmention repeat PENDING", "wm-repeat|" c, "go-dup|" c)
    if (("wm-workers|" c) in runs)
      row("new pairs, workers on", "wm-workers|" c, "express-new|" c)
    if (("wm-grown|" c) in runs)
      row("new pairs, 5M stored", "wm-grown|" c, "wm-new|" c)
    if (ENVIRON["BENCH_INGEST"] == "yes") {
      row("ingest unique unsigned", "in-unique|" c, "go-unique|" c)
      row("ingest signed v1a", "in-signed|" c, "go-unique|" c)
      row("ingest duplicate", "in-dup|" c, "go-dup|" c)
      row("ingest duplicate, cache off", "in-dup-direct|" c, "go-dup|" c)
      u = median(cpu["in-unique|" c]); s = median(cpu["in-signed|" c]); e = ENVIRON["BENCH_ED25519_US"]
      if (e > 0)
        printf "  signed - unsigned CPU: %.1f us/request = %.2f Ed25519 verifications (openssl speed: %.1f us each; target <= 1.3)\n", s - u, (s - u) / e, e
    } else {
      printf "%-28s %5s  n/a (POST /ingest not built yet)\n", "ingest rows", c
    }
  }
  print "CPU us/r: CPU time of the server processes per request (Portcullis: gateway + verifier + PostgreSQL);"
  print "RSS: largest resident size seen of the answering process (Portcullis: the gateway)."
  printf "\nPortcullis CPU per request by stage, us (medians)\n"
  printf "%-28s %5s %12s %12s %12s %12s %12s %9s\n", "row", "conns", "gateway HTTP", "gateway rest",
    "verif writer", "verif rest", "PostgreSQL", "sum"
  for (i = 1; i <= n; i++) {
    c = conns[i]
    stages("webmention new pairs", "wm-new|" c)
    stages("webmention repeat PENDING", "wm-repeat|" c)
    stages("new pairs, workers on", "wm-workers|" c)
    stages("new pairs, 5M stored", "wm-grown|" c)
    stages("ingest unique unsigned", "in-unique|" c)
    stages("ingest signed v1a", "in-signed|" c)
    stages("ingest duplicate", "in-dup|" c)
    stages("ingest duplicate, cache off", "in-dup-direct|" c)
    stages("read /api/mentions.jf2", "wm-read|" c)
    stages("read /api/count.json", "wm-count|" c)
  }
  print "gateway HTTP: its http-io threads (Beast: parsing, validating, answering);"
  print "gateway rest: its gRPC client threads and the others; verif writer: the verifier's"
  print "batch-writer threads (building and sending the batch statements); verif rest: gRPC's"
  print "threads, where the handlers run, and the others (its workers, in the workers-on row)."
}
