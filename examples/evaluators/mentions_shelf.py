"""An example user validator: reads {"output", "expected_output", "input"} JSON on stdin,
prints a result in visioneval's format, exits 0 if passed, 1 if not."""

import json
import sys

data = json.loads(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read())
passed = "bottle" in data["output"].lower()
print(json.dumps({"status": "processed", "score": 1.0 if passed else 0.0, "passed": passed,
                  "details": {"checked": "the answer names bottles"}}))
sys.exit(0 if passed else 1)
