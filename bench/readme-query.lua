-- wrk script: POST the README's query to /graphql.
-- Run: wrk -t2 -c16 -d10s -s bench/readme-query.lua http://127.0.0.1:18080/graphql
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query":"{ customers { id number contact { name email } orders { id } } }"}'

done = function(summary, latency, requests)
  io.write(string.format("non-2xx or socket errors: %d\n",
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
