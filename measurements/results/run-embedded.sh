#!/usr/bin/env bash
# How the published results were made: HumanEval (or DATASETS) direct vs selfdebug with the embedded models, in
# growing stages so that at any stop both modes cover the same first N tasks; HumanEval-ET and HumanEval+ reuse
# those generations (same prompts) and only re-score them (MBPP-ET reuses MBPP's where its prompt is the same).
# Self-debugging runs first: the direct run then takes each task's attempt 1 (the same greedy request) and asks
# the model nothing. Resumable: rerun it and finished
# tasks are skipped.
# Usage: [SETTINGS=DIR] [OUT=DIR] [MODES="selfdebug direct"] [DATASETS="humaneval humaneval-et humaneval-plus"] \
#          bash measurements/results/run-embedded.sh SIZE [DEADLINE_EPOCH [LIMIT...]]
#   SIZE: 0.5b or 1.5b. SETTINGS: a folder under docs/results whose pyproject.toml holds [tool.pycapsule] loop
#   settings; the runs start there, so those settings apply (and are recorded in each run's manifest).
#   OUT: the results folder under docs/results (default qwen2.5-coder-SIZE). ATTEMPTS: --max-attempts (default: the
#   setting's value, so the runs use the shipped defaults unless SETTINGS says otherwise).
# When the runs are done: python3 measurements/results/publish.py docs/results/OUT (records out of docs/, to
# data/records/, gzipped).
set -uo pipefail
cd "$(dirname "$0")/../.."
size=${1:?size: 0.5b or 1.5b}
deadline=${2:-0}
shift $(( $# < 2 ? $# : 2 ))
limits=("${@:-40 80 120 164}")
modes=${MODES:-selfdebug direct}
datasets=${DATASETS:-humaneval humaneval-et humaneval-plus}
out=docs/results/${OUT:-qwen2.5-coder-$size}
attempts=(${ATTEMPTS:+--max-attempts "$ATTEMPTS"})
if [[ -n "${SETTINGS:-}" ]]; then
  cd "docs/results/$SETTINGS" || exit 2
  out=../${OUT:-qwen2.5-coder-$size}
fi
unset OPENAI_BASE_URL OPENAI_API_KEY PYCAPSULE_MODEL  # the embedded model, nothing else
# Greedy answers can differ between thread counts, and by default the model picks its count from the load
# when it starts: pin it (one per physical core unless set) so resumed stages answer as the first did.
PYCAPSULE_MODEL_THREADS=${PYCAPSULE_MODEL_THREADS:-$(python3 -c \
  'from pycapsule.embedded_model.serve import physical_cores; print(physical_cores())')}
export PYCAPSULE_MODEL_THREADS

bench() {
  local left=$(( deadline > 0 ? deadline - $(date +%s) : 86400 ))
  if (( left < 30 )); then echo "deadline reached"; exit 0; fi
  # SIGTERM lets the run save what it has and rebuild the report before it stops (SIGINT would be lost
  # where this script runs in the background: such jobs start with SIGINT ignored)
  timeout --kill-after=60 "$left" nice -n 19 pycapsule bench "$@" --model "$size" --out "$out"
}

for limit in ${limits[*]}; do
  for dataset in $datasets; do
    for mode in $modes; do
      if [[ $mode == direct ]]; then
        bench "$dataset" --mode direct --limit "$limit"
      else
        bench "$dataset" --mode selfdebug "${attempts[@]}" --limit "$limit"
      fi
    done
  done
done
