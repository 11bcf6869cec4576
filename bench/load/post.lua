-- wrk script: POST the body in $BENCH_BODY_FILE, print one JSON line of results at the end.
-- Headers (Accept-Encoding) come from wrk's -H flags; the key is in the URL (?apikey=).
local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

-- The results line, shared by the scripts: report.lua beside this one.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "report.lua")
