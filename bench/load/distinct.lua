-- wrk script: POST eth_getBalance for one of 1000 different addresses in turn, so that no two
-- calls in flight are the same (a gateway that shares identical calls in flight gets no help).
-- Prints one JSON line of results at the end, as report.lua writes it.
local requests = {}
local n = 1000
local i = 0

function init(args)
  for k = 1, n do
    local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}', k, k * 7919)
    requests[k] = wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
  end
end

function request()
  i = i % n + 1
  return requests[i]
end

-- The results line, shared by the scripts: report.lua beside this one.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "report.lua")
