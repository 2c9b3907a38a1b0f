#!/bin/sh
# Reads {"name": "..."} and greets; a line of progress on stderr.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
echo "looking up $name" >&2
echo "hello, $name"
