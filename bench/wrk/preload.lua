-- Stores invites through the API and writes their ids, one per line, to OUT.<thread>.
-- Arguments (after `--`): SITE_ID BASIC_AUTH COUNT_PER_THREAD OUT
-- Each thread stops once it has recorded COUNT_PER_THREAD invites (bench/run.sh then
-- stops wrk, which would otherwise wait out its duration).
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local quota, out, done = 0, nil, 0

function init(args)
  wrk.method = "POST"
  wrk.path = "/v1/website/" .. args[1] .. "/invite"
  wrk.body = '{"customId":"bench-user"}'
  wrk.headers["Authorization"] = "Basic " .. args[2]
  wrk.headers["Content-Type"] = "application/json"
  quota = tonumber(args[3])
  out = io.open(args[4] .. "." .. index, "w")
  out:setvbuf("line")
end

function response(status, headers, body)
  if done >= quota then return end
  local id = status == 200 and body:match('"inviteId":"([^"]+)"')
  if id then
    out:write(id, "\n")
    done = done + 1
    if done >= quota then
      out:flush()
      wrk.thread:stop()
    end
  end
end
