#!/bin/sh
# A stand-in subagent: reads the task on stdin and answers on stdout.
task=$(cat)
echo "subagent at depth $BASIS_SPAWN_DEPTH did: $task"
