-- The benchmark's workloads, for wrk. Arguments (after `--`):
--   MODE SITE_ID BASIC_AUTH IDS_FILE [CUSTOM_IDS BLOCK]
-- MODE: create (POST only), get (GET of a random stored invite), mixed (1 create : 9 gets).
-- CUSTOM_IDS: what creates send (custom_id.lua): distinct (the default: a user id of
-- its own each, scattered), none or same; BLOCK: this run's share of distinct ids.
-- IDS_FILE: one inviteId per line (stored invites to read; unused by create), all of one
-- length. They stay one string, read at offsets, so the collector has no table of them to
-- walk. Keep the file to tens of thousands of ids: LuaJIT interns every distinct path, and
-- with a million the ceiling itself lost 10 % and its p99 tripled (bench/run.sh samples).
local custom_id = dofile((debug.getinfo(1, "S").source:sub(2):gsub("invites%.lua$", "custom_id.lua")))
local mode, create_path, post_headers, get_headers, ids, width, count, body
local counter = 0

function init(args)
  mode = args[1]
  create_path = "/v1/website/" .. args[2] .. "/invite"
  get_headers = { ["Authorization"] = "Basic " .. args[3] }
  post_headers = { ["Authorization"] = "Basic " .. args[3], ["Content-Type"] = "application/json" }
  body = custom_id.bodies(args[5] or "distinct", args[6] or 0)
  if mode ~= "create" then
    local file = assert(io.open(args[4], "rb"))
    ids = file:read("*a")
    file:close()
    width = ids:find("\n", 1, true)
    assert(width and width > 1, "no invite ids in " .. args[4])
    count = #ids / width
    assert(count == math.floor(count) and ids:sub(-1) == "\n", "invite ids of one length, one per line")
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
  counter = math.random(10)
end

function request()
  counter = counter + 1
  if mode == "create" or (mode == "mixed" and counter % 10 == 0) then
    return wrk.format("POST", create_path, post_headers, body())
  end
  local at = (math.random(count) - 1) * width
  return wrk.format("GET", create_path .. "/" .. ids:sub(at + 1, at + width - 1), get_headers)
end
