#!/bin/sh
# The example catalog behind tools.example.toml.
#
#   catalog.sh search -- QUERY LIMIT   names containing QUERY (any case), one per line
#   catalog.sh details -- NAME         one product as JSON, exit 1 if there is none
#   catalog.sh card -- NAME            one product as an MCP content document: its picture,
#                                      its spoken name and its catalog record
#   catalog.sh clear                   empty the catalog
#
# The shipped catalog.tsv is never modified: each server process works on its own copy in
# examples/state/ (the one folder the example's sandbox lets these tools write), named after
# the mcp-serve process that runs this script ($MCP_SERVE_INSTANCE: its id and a random part,
# so a later server that reuses the id never finds this copy), so `clear` lasts until the
# server restarts. Arguments arrive as separate argv elements and are only ever
# compared with, never evaluated.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
state="$here/state/catalog-${MCP_SERVE_INSTANCE:-$PPID}.tsv"
[ -f "$state" ] || cp "$here/catalog.tsv" "$state"

command=${1:-}
[ $# -gt 0 ] && shift
# `--` ends the options: whatever follows is data, even if it starts with `-`.
[ "${1:-}" = "--" ] && shift

case "$command" in
search)
    QUERY=$1 awk -F '\t' -v limit="$2" '
        BEGIN { q = tolower(ENVIRON["QUERY"]) }
        index(tolower($1), q) && n < limit { print $1; n++ }
    ' "$state"
    ;;
details)
    NAME=$1 awk -F '\t' '
        BEGIN { q = ENVIRON["NAME"] }
        $1 == q { printf "{\"name\":\"%s\",\"price\":%s}\n", $1, $2; found = 1 }
        END { if (!found) { print "no product is named \"" q "\"" > "/dev/stderr"; exit 1 } }
    ' "$state"
    ;;
card)
    record=$(NAME=$1 awk -F '\t' '$1 == ENVIRON["NAME"] { printf "{\"name\":\"%s\",\"price\":%s}", $1, $2 }' "$state")
    if [ -z "$record" ]; then
        echo "no product is named \"$1\"" >&2
        exit 1
    fi
    slug=$(printf '%s' "$1" | tr 'A-Z ' 'a-z-')
    # The record's URI names the product percent-encoded (RFC 3986 unreserved bytes kept).
    uri=$(printf '%s' "$1" | od -An -v -tx1 | awk '
        BEGIN { for (i = 0; i < 256; i++) value[sprintf("%02x", i)] = i }
        {
            for (i = 1; i <= NF; i++) {
                v = value[$i]
                if ((v >= 48 && v <= 57) || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) || v == 45 || v == 46 || v == 95 || v == 126)
                    printf "%c", v
                else
                    printf "%%%s", toupper($i)
            }
        }')
    image=$(base64 -w0 "$here/products/$slug.png")
    audio=$(base64 -w0 "$here/products/$slug.wav")
    escaped=$(printf '%s' "$record" | sed 's/\\/\\\\/g; s/"/\\"/g')
    printf '{"content":[{"type":"image","data":"%s","mimeType":"image/png"},' "$image"
    printf '{"type":"audio","data":"%s","mimeType":"audio/wav"},' "$audio"
    printf '{"type":"resource","resource":{"uri":"catalog://products/%s","mimeType":"application/json","text":"%s"}}]}\n' "$uri" "$escaped"
    ;;
clear)
    count=$(wc -l < "$state" | tr -d ' ')
    : > "$state"
    echo "Cleared $count products from the catalog."
    ;;
*)
    echo "usage: catalog.sh search -- QUERY LIMIT | details -- NAME | card -- NAME | clear" >&2
    exit 2
    ;;
esac
