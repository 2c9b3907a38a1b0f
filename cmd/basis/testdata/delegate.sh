#!/bin/sh
# A stand-in subagent: reads the task on stdin and answers on stdout,
# saying which arguments it was given.
task=$(cat)
if [ $# -gt 0 ]; then
  printf 'arguments (%d):' $#
  printf ' [%s]' "$@"
  echo
fi
echo "subagent at depth $BASIS_SPAWN_DEPTH did: $task"
