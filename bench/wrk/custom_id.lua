-- The customIds of the benchmark's creates, shared by invites.lua and preload.lua (wrk
-- loads each script into every thread; this file is loaded with dofile next to it).
-- Sites send their own user id, so in real traffic nearly every create carries another
-- one, in no particular order: "distinct" draws `user-<n>` with n a bijection of a
-- counter over [1, 2^31 - 1], scattered (n = x · A mod P, A a primitive root of the
-- Mersenne prime P, computed exactly in LuaJIT's doubles by splitting A in 16-bit
-- halves). Each wrk run gets a BLOCK of its own from the caller (2^24 counters) and each
-- thread half of it, so no two creates of a benchmark send the same id. "none" sends
-- `{}` and "same" one customId for every create: the variants from before the benchmark sent distinct customIds.
local P, A_HI, A_LO = 2147483647, 11336, 22189 -- A = 742938285 = 11336 · 2^16 + 22189
local BLOCK, THREAD = 16777216, 8388608

local M = {}

function M.scatter(x)
  return ((x * A_HI % P) * 65536 + x * A_LO) % P
end

-- A body maker: `next()` returns the body of the next create.
function M.bodies(kind, block, thread_index)
  if kind == "none" then
    return function() return "{}" end
  elseif kind == "same" then
    return function() return '{"customId":"bench-user"}' end
  end
  assert(kind == "distinct", "customId kind is distinct, none or same, not " .. tostring(kind))
  local x = 1 + tonumber(block) * BLOCK + (thread_index or 0) * THREAD
  assert(x + THREAD < P, "customId block out of range")
  return function()
    x = x + 1
    return '{"customId":"user-' .. string.format("%d", M.scatter(x)) .. '"}'
  end
end

return M
