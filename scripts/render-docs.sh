#!/usr/bin/env bash
# make docs: runs the tour's examples (docs/tour/) and renders the pictures they draw with
# Graphviz into docs/tour/img/*.svg (the .dot sources sit next to them; tour_07_ddp and
# tour_11_join under mpirun on 2 ranks). Also saves
# explain_replicate's printed output as docs/tour/img/explain_replicate.txt.
# Usage: scripts/render-docs.sh <build dir>
set -euo pipefail
build=${1:?usage: render-docs.sh <build dir>}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/docs/tour/img
command -v dot >/dev/null || { echo "render-docs: Graphviz's dot is missing (apt-get install graphviz)"; exit 1; }
mkdir -p "$out"
ex=$build/examples
"$ex/tour_01_tensor" "$out" >/dev/null
"$ex/tour_02_autograd" "$out" >/dev/null
"$ex/tour_03_module" "$out" >/dev/null
"$ex/explain_replicate" "$out" > "$out/explain_replicate.txt"
"$ex/tour_10_checkpoint" "$out" >/dev/null
# Page 7 runs on 2 processes ($MPIRUN: the launcher and its options, the Makefile's by default).
${MPIRUN:-mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none} \
  -np 2 "$ex/tour_07_ddp" "$out" >/dev/null
# Page 11 as well (rank 0 writes join_timeline.dot).
${MPIRUN:-mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none} \
  -np 2 "$ex/tour_11_join" "$out" >/dev/null
rm -f "$out/trace.json"
for f in "$out"/*.dot; do
  dot -Tsvg "$f" -o "${f%.dot}.svg"
  echo "rendered ${f%.dot}.svg"
done
