-- wrk script: POST batches of 50 eth_getBalance calls, every call of every batch for another
-- address (200 batches in turn, 10,000 addresses): no two calls alike in a batch nor in flight, so
-- neither a batch's copies nor in-flight sharing help; the node answers 50 calls per request for
-- every target. Prints one JSON line of results at the end, as report.lua writes it.
local requests = {}
local n = 200
local i = 0

function init(args)
  for k = 1, n do
    local calls = {}
    for j = 1, 50 do
      local a = (k - 1) * 50 + j
      calls[j] = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x%040x","latest"]}', j, a * 7919)
    end
    requests[k] = wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, "[" .. table.concat(calls, ",") .. "]")
  end
end

function request()
  i = i % n + 1
  return requests[i]
end

-- The results line, shared by the scripts: report.lua beside this one.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "report.lua")
