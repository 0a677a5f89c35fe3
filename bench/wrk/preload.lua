-- Stores invites through the API and writes their ids, one per line, to OUT.<thread>.
-- Arguments (after `--`): SITE_ID BASIC_AUTH COUNT_PER_THREAD OUT [CUSTOM_IDS BLOCK]
-- (custom_id.lua; distinct by default: every invite a customId of its own).
-- Each thread stops once it has recorded COUNT_PER_THREAD invites (bench/run.sh then
-- stops wrk, which would otherwise wait out its duration).
local custom_id = dofile((debug.getinfo(1, "S").source:sub(2):gsub("preload%.lua$", "custom_id.lua")))
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local quota, out, done, path, headers, body = 0, nil, 0

function init(args)
  path = "/v1/website/" .. args[1] .. "/invite"
  headers = { ["Authorization"] = "Basic " .. args[2], ["Content-Type"] = "application/json" }
  quota = tonumber(args[3])
  out = io.open(args[4] .. "." .. index, "w")
  out:setvbuf("line")
  body = custom_id.bodies(args[5] or "distinct", args[6] or 0, index)
end

function request()
  return wrk.format("POST", path, headers, body())
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
