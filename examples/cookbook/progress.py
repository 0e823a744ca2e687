"""Reports one progress line per step on $MCP_SERVE_EVENTS (when a client asked for
progress), then prints the result."""
import json
import os
import sys
import time

steps = int(sys.argv[1])
path = os.environ.get("MCP_SERVE_EVENTS", os.devnull)
with open(path, "w", buffering=1) as events:
    for step in range(1, steps + 1):
        time.sleep(0.05)  # the work
        events.write(json.dumps({"progress": step, "total": steps, "message": f"step {step} of {steps}"}) + "\n")
print(f"the report is ready ({steps} steps)")
