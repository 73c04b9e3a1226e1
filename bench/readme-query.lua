-- wrk script: POST the README's query to /graphql.
-- Run: wrk -t2 -c16 -d10s -s bench/readme-query.lua http://127.0.0.1:18080/graphql
-- With FINGRAPH_SESSION set (a session token), requests carry it, as against
-- a gateway with real upstreams, where there is no anonymous demo session
-- (bench/readme-cpu.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local session = os.getenv("FINGRAPH_SESSION")
if session ~= nil and session ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. session
end
wrk.body = '{"query":"{ customers { id number contact { name email } orders { id } } }"}'

done = function(summary, latency, requests)
  io.write(string.format("non-2xx or socket errors: %d\n",
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
