#!/bin/sh
# The example catalog behind tools.example.toml.
#
#   catalog.sh search QUERY LIMIT   names containing QUERY (any case), one per line
#   catalog.sh details NAME         one product as JSON, exit 1 if there is none
#   catalog.sh clear                empty the catalog
#
# The shipped catalog.tsv is never modified: each server process works on its own copy,
# named after the mcp-serve process that runs this script ($PPID), so `clear` lasts until
# the server restarts. Arguments arrive as separate argv elements and are only ever
# compared with, never evaluated.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
state="${TMPDIR:-/tmp}/mcp-serve-example-catalog-$PPID.tsv"
[ -f "$state" ] || cp "$here/catalog.tsv" "$state"

case "${1:-}" in
search)
    QUERY=$2 awk -F '\t' -v limit="$3" '
        BEGIN { q = tolower(ENVIRON["QUERY"]) }
        index(tolower($1), q) && n < limit { print $1; n++ }
    ' "$state"
    ;;
details)
    NAME=$2 awk -F '\t' '
        BEGIN { q = ENVIRON["NAME"] }
        $1 == q { printf "{\"name\":\"%s\",\"price\":%s}\n", $1, $2; found = 1 }
        END { if (!found) { print "no product is named \"" q "\"" > "/dev/stderr"; exit 1 } }
    ' "$state"
    ;;
clear)
    count=$(wc -l < "$state" | tr -d ' ')
    : > "$state"
    echo "Cleared $count products from the catalog."
    ;;
*)
    echo "usage: catalog.sh search QUERY LIMIT | details NAME | clear" >&2
    exit 2
    ;;
esac
