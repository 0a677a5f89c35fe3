-- The benchmark's workloads, for wrk. Arguments (after `--`):
--   MODE SITE_ID BASIC_AUTH IDS_FILE
-- MODE: create (POST only), get (GET of a random stored invite), mixed (1 create : 9 gets).
-- IDS_FILE: one inviteId per line (stored invites to read; unused by create).
local mode, create_path, post_headers, get_headers, ids
local body = '{"customId":"bench-user"}'
local counter = 0

function init(args)
  mode = args[1]
  create_path = "/v1/website/" .. args[2] .. "/invite"
  get_headers = { ["Authorization"] = "Basic " .. args[3] }
  post_headers = { ["Authorization"] = "Basic " .. args[3], ["Content-Type"] = "application/json" }
  ids = {}
  if mode ~= "create" then
    for line in io.lines(args[4]) do ids[#ids + 1] = line end
    assert(#ids > 0, "no invite ids in " .. args[4])
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
  counter = math.random(10)
end

function request()
  counter = counter + 1
  if mode == "create" or (mode == "mixed" and counter % 10 == 0) then
    return wrk.format("POST", create_path, post_headers, body)
  end
  return wrk.format("GET", create_path .. "/" .. ids[math.random(#ids)], get_headers)
end
