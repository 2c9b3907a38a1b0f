#!/bin/sh
# Runs basis against the example workspace, showing each command and what it
# printed. Usage: demo.sh BASIS_BINARY WORKSPACE_DIR
# Some steps are meant to be refused; each step states the exit status it
# expects, and the demo fails if basis answers otherwise.
set -u
basis=$1
cd "$2" || exit 1

# A configuration directory of the demo's own, so the operator's rules in
# ~/.config/basis play no part and nothing is written there.
BASIS_CONFIG_DIR=$(mktemp -d)
export BASIS_CONFIG_DIR
trap 'rm -rf "$BASIS_CONFIG_DIR"' EXIT
unset BASIS_DELEGATE BASIS_SPAWN_DEPTH

show() {
	line="basis"
	for a in "$@"; do
		case $a in
		'' | *[!A-Za-z0-9_./=-]*) line="$line '$a'" ;;
		*) line="$line $a" ;;
		esac
	done
	printf '\n$ %s\n' "$line"
}

step() {
	want=$1
	shift
	show "$@"
	"$basis" "$@"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "demo: expected exit status $want, got $got" >&2
		exit 1
	fi
	[ "$got" -eq 0 ] || echo "(exit status $got)"
}

echo "# in examples/workspace, with an empty configuration directory"
step 0 tools
step 0 check
step 0 call word_count '{"path": "data/notes.txt"}' --approve deny
step 0 call json_query '{"file": "data/inventory.json", "path": "items.2"}' --approve allow
step 3 call json_query '{"file": "data/inventory.json", "path": 7}' --approve allow
step 3 call ticket '{"title": "Recount the brackets", "priority": "high"}' --approve deny
step 0 call ticket '{"title": "Recount the brackets", "priority": "high"}' --approve allow
step 0 rules add --tool spawn --command 'ls *' --allow --reason 'listing files is harmless'
step 0 call spawn '{"input": "!ls data"}' --approve deny
step 3 call spawn '{"input": "!ls data && rm -rf data"}' --approve deny

echo
echo "# the workspace's .mcp.json names an MCP server (examples/mcpserver); basis"
echo "# starts it only once the operator trusted the file's exact content"
step 0 mcp list
step 3 call mcp__stockroom__stock_level '{"name": "bracket"}' --approve allow
step 0 mcp trust
step 0 tools
step 0 call mcp__stockroom__stock_level '{"name": "bracket"}' --approve allow
step 3 call mcp__stockroom__reserve_stock '{"name": "bracket", "count": 5}' --approve deny
step 0 call mcp__stockroom__reserve_stock '{"name": "bracket", "count": 5}' --approve allow
