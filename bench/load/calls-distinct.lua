-- wrk script: POST eth_call with a transaction object (from, to, data: an ERC-20 balanceOf) for
-- one of 1000 different holders in turn: the params are an object the gateway reads (its `to` for
-- contract rules, its member names checked), and no two calls in flight are the same. Prints one
-- JSON line of results at the end, as report.lua writes it.
local requests = {}
local n = 1000
local i = 0

function init(args)
  for k = 1, n do
    local body = string.format(
      '{"jsonrpc":"2.0","id":%d,"method":"eth_call","params":[{"from":"0x%040x","to":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","data":"0x70a08231%064x"},"latest"]}',
      k, k, k * 7919)
    requests[k] = wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
  end
end

function request()
  i = i % n + 1
  return requests[i]
end

-- The results line, shared by the scripts: report.lua beside this one.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "report.lua")
