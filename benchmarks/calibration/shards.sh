#!/usr/bin/env bash
# Run calibration shards side by side on one multi-GPU host: each shard gets its own GPUs
# (CUDA_VISIBLE_DEVICES) and its own CPU cores (taskset), so the shards share only the host's
# memory and PCIe. Each shard is one `python -m benchmarks.calibration.run --device cuda` into
# OUT/<name>/, its output in OUT/<name>.log.
#
#   benchmarks/calibration/shards.sh OUT "NAME|GPUS|CORES|RUN ARGS" ...
#   e.g. shards.sh $OUT "t20|0|0-15|--targets-us 20 --effects all" \
#                       "dist|2,3|32-63|--nproc 2"
set -euo pipefail
out=$1
shift
mkdir -p "$out"
pin=()
for spec in "$@"; do
    IFS='|' read -r name gpus cores args <<<"$spec"
    if command -v taskset >/dev/null; then pin=(taskset -c "$cores"); fi
    # shellcheck disable=SC2086  # ARGS are words
    CUDA_VISIBLE_DEVICES=$gpus "${pin[@]}" python3 -m benchmarks.calibration.run --device cuda \
        --out "$out/$name" $args >"$out/$name.log" 2>&1 &
    echo "[shards] $name: GPUs $gpus, cores $cores, pid $!: $args" >&2
done
wait
echo "[shards] done" >&2
