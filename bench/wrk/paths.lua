-- GETs PREFIX .. id for ids drawn at random from IDS_FILE (one per line, all of one
-- length), for bench/trust_refresh.sh. Arguments (after `--`): PREFIX IDS_FILE [BASIC_AUTH].
-- At the end prints one line: `result <p50 µs> <p99 µs> <requests> <non-2xx> <seconds>`.
local prefix, ids, width, count, headers

function init(args)
  prefix = args[1]
  local file = assert(io.open(args[2], "rb"))
  ids = file:read("*a")
  file:close()
  width = ids:find("\n", 1, true)
  assert(width and width > 1, "no ids in " .. args[2])
  count = #ids / width
  headers = {}
  if args[3] then headers["Authorization"] = "Basic " .. args[3] end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

function request()
  local at = (math.random(count) - 1) * width
  return wrk.format("GET", prefix .. ids:sub(at + 1, at + width - 1), headers)
end

function done(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  io.write(string.format("result %d %d %d %d %.3f\n", latency:percentile(50),
    latency:percentile(99), summary.requests, bad, summary.duration / 1e6))
end
