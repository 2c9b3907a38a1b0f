#!/bin/sh
# A stand-in approval hook: reads the request on stdin and answers with
# its first argument (allow or deny), the other arguments as the reason.
cat >/dev/null
decision=$1
shift
printf '{"decision": "%s", "reason": "%s"}\n' "$decision" "$*"
