#!/usr/bin/env bash
# apidiff.sh APIDIFF BASE MODULE... prints, per module, the incompatible
# API changes between a base revision and the working tree, as apidiff
# (golang.org/x/exp/cmd/apidiff, pinned in scripts/tools) reports them.
# BASE empty: each module against its last release tag (<dir>/vX.Y.Z),
# or against FALLBACK (7246ab3, the tree before issue 21) when it has
# none. Base trees are extracted with git archive into a temporary
# directory, so the working tree and its worktrees are never touched.
# Exits 1 when a module could not be compared; incompatible changes are
# reported, not failed on (the CHANGELOG says what replaces them).
set -euo pipefail

apidiff=$1 base=$2
shift 2
fallback=${FALLBACK:-7246ab3}
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# extract REV: a read-only copy of the tree at REV; prints its directory.
extract() {
	local rev dir
	rev=$(git -C "$top" rev-parse --verify --quiet "$1^{commit}") || { echo "apidiff: unknown revision $1" >&2; return 1; }
	dir=$tmp/$rev
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		git -C "$top" archive "$rev" | tar -x -C "$dir"
	fi
	echo "$dir"
}

for m in "$@"; do
	path=$(awk '$1 == "module" { print $2; exit }' "$top/$m/go.mod")
	rev=$base
	if [ -z "$rev" ]; then
		rev=$(git -C "$top" tag -l "$m/v*" --sort=-v:refname | head -n 1)
		rev=${rev:-$fallback}
	fi
	echo "== $m ($path) against $rev"
	dir=$(extract "$rev") || { status=1; continue; }
	if [ ! -f "$dir/$m/go.mod" ]; then
		echo "(new module: not in $rev)"
		continue
	fi
	key=${m//\//_}
	# apidiff notes each internal package it skips on stderr: shown only
	# when reading the API fails.
	if ! (cd "$dir/$m" && "$apidiff" -m -w "$tmp/$key.old" "$path") 2>"$tmp/err" ||
		! (cd "$top/$m" && "$apidiff" -m -w "$tmp/$key.new" "$path") 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "apidiff: cannot read the API of $m" >&2
		status=1
		continue
	fi
	# A module nested in this one's directory (cmd/basis/runtime in
	# cmd/basis) shows up as "./dir" packages: it is reported on its own.
	if ! "$apidiff" -m -incompatible "$tmp/$key.old" "$tmp/$key.new" >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "apidiff: cannot compare the API of $m" >&2
		status=1
		continue
	fi
	out=$(grep -v '^- \./' "$tmp/out" || true)
	echo "${out:-(no incompatible change)}"
done
exit $status
