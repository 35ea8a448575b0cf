-- wrk script for bench/service_load.sh: unique run uploads (mode "upload") or verdict requests ("verdict").
-- ("verdict" repeats one run, answered from the stored verdict; "verdict-new" walks distinct runs from RUN_ID
-- upwards, each computed by the bootstrap.) Arguments after "--": MODE TOKEN BODY_FILE RUN_ID
local counter = 0
local thread_count = 0

function setup(thread)
  thread:set("tid", thread_count)
  thread_count = thread_count + 1
end

function init(args)
  mode = args[1]
  local token = args[2]
  local file = assert(io.open(args[3], "r"))
  template = file:read("*a")
  file:close()
  run_id = args[4]
  headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  if mode == "upload" then
    -- A distinct commit per request: identical documents would be 409 duplicates.
    local body = template:gsub("__COMMIT__", "load-" .. tid .. "-" .. counter, 1)
    return wrk.format("POST", "/api/v1/runs", headers, body)
  end
  if mode == "verdict-new" then
    -- Two wrk threads interleave: thread 0 takes even offsets, thread 1 odd ones.
    local id = tonumber(run_id) + (counter - 1) * 2 + tid
    return wrk.format("POST", "/api/v1/runs/" .. id .. "/verdict", headers, "")
  end
  return wrk.format("POST", "/api/v1/runs/" .. run_id .. "/verdict", headers, "")
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %d %.2f %.1f %.2f %.2f %.2f %d %d\n", summary.requests, seconds,
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, summary.errors.status, errors))
end
