-- wrk script: POST the side-by-side query (the one ../shared/peers/run.sh sends every gateway) to /graphql.
-- Run: SCRIPT=bench/side-by-side-query.lua bench/readme-cpu.sh /tmp/fingraph 18911
-- With FINGRAPH_SESSION set (a session token), requests carry it, as against
-- a gateway with real upstreams, where there is no anonymous demo session
-- (bench/readme-cpu.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local session = os.getenv("FINGRAPH_SESSION")
if session ~= nil and session ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. session
end
wrk.body = [[{"query":"{ customers { id number contact { name email } orders(start: \"2026-08-01\", end: \"2026-11-30\") { id status amount { amount currency } } } }"}]]

done = function(summary, latency, requests)
  io.write(string.format("non-2xx or socket errors: %d\n",
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
