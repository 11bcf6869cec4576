-- wrk script: POST eth_getBalance for one of 1000 different addresses in turn, so that no two
-- calls in flight are the same (a gateway that shares identical calls in flight gets no help).
-- Prints one JSON line of results at the end, as post.lua does.
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

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"p999Us":%d,"maxUs":%d,"meanUs":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
