#!/usr/bin/env bash
# A full comparison on one backend: every prompt answered with SoT and sequentially, then the report.
#   eval/run_comparison.sh URL MODEL [PROMPTS] [OUT]
# PROMPTS defaults to ../shared/data/vicuna80.jsonl (read by path, never copied).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
url=${1:?usage: run_comparison.sh URL MODEL [PROMPTS] [OUT]}
model=${2:?usage: run_comparison.sh URL MODEL [PROMPTS] [OUT]}
prompts=${3:-$here/../../shared/data/vicuna80.jsonl}
out=${4:-$here/results/comparison.jsonl}
mkdir -p "$(dirname "$out")"
sot batch "$prompts" --out "$out" --modes sot,sequential,auto --concurrency 4 --base-url "$url" --model "$model" --resume
sot report "$out"
