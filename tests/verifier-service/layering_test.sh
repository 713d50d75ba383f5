#!/bin/sh
# The verifier's layers as the design draws them (issue 14): store/ depends on nothing of the
# service's (it takes plain values), verification/ depends on no store (it meets the store only
# through queue/'s MentionVerifier). Fails naming each file and line that breaks a rule: an
# #include in the sources, or a link in the CMake files.
#
#   layering_test.sh <repository root>
set -u
root=${1:?usage: layering_test.sh <repository root>}
cd "$root" || exit 2
src=verifier-service/src
status=0

# includes <directory under src> <forbidden directories, as an ERE alternation> <why>
includes() {
  files=$(find "$src/$1" -name '*.h' -o -name '*.cc' | sort)
  if [ -z "$files" ]; then
    echo "no sources under $src/$1: nothing was checked"
    status=1
    return
  fi
  # shellcheck disable=SC2086 # one word per file
  found=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<](verifier-service/src/)?($2)/" $files)
  if [ -n "$found" ]; then
    echo "$found" | sed "s|\$|  ($3)|"
    status=1
  fi
}

# links <CMake file> <libraries, ERE> <forbidden libraries, ERE> <why>: the portcullis_library()
# blocks and target_link_libraries() calls of those libraries name no forbidden library.
links() {
  found=$(awk -v library="$2" -v forbidden="$3" -v why="$4" '
    $0 ~ "^[[:space:]]*(portcullis_library\\((" library ")|target_link_libraries\\(portcullis_(" library "))([[:space:]]|$)" {
      inside = 1; seen = 1
    }
    inside && $0 ~ "portcullis::(" forbidden ")([[:space:])]|$)" {
      line = $0; sub(/^[[:space:]]+/, "", line)
      printf "%s:%d: %s  (%s)\n", FILENAME, FNR, line, why
    }
    inside && /\)[[:space:]]*$/ { inside = 0 }
    END { if (!seen) printf "%s: no library matching %s: nothing was checked\n", FILENAME, library }
  ' "$1")
  if [ -n "$found" ]; then
    echo "$found"
    status=1
  fi
}

includes store 'auth|intake|server|queue|verification|ingest|html|fetch' \
  "store/ depends on nothing of the service's"
includes verification 'store' 'verification/ depends on no store'
links verifier-service/CMakeLists.txt 'verifier_store|verifier_store_values|verifier_token_store' \
  'verifier_(auth|intake|server|queue|verification|ingest|ingest_vectors|html|fetch|proto)' \
  "the store libraries link nothing of the service's"
links verifier-service/src/verification/CMakeLists.txt 'verifier_verification' \
  'verifier_store|verifier_store_values|verifier_token_store' 'verification links no store'

if [ "$status" -eq 0 ]; then
  echo "layering: store/ and verification/ keep to their layers"
fi
exit "$status"
