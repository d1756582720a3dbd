#!/usr/bin/env bash
# Profile bundled workloads in every mode on a GPU machine and pack each run directory.
#
# usage: [PHASES="1 2"] [EST_S=240] workloads/run_all_gpu.sh OUT_DIR BUDGET_S WORKLOAD...
#   OUT_DIR   gets <workload>.tar.gz (the run directory runs/<workload>) and driver.log
#   BUDGET_S  wall-clock seconds for the whole script; a workload that could not finish by
#             then (EST_S seconds from its start) is left out (and said so in driver.log)
#   PHASES    which phases to run ("1", "2" or "1 2"), so one machine's calls can warm the
#             caches once and profile the workloads over several calls
#
# Phase 1 compiles every workload's torch.compile modes in parallel, only to fill Inductor's
# on-disk caches (FX graph, Triton and autotuning caches); its run directories are thrown away.
# Phase 2 profiles one workload at a time, so no timing shares the GPU or the CPUs with another
# run, with TORCHINDUCTOR_COMPILE_THREADS=1 (the caches are warm, so no pool of compile workers
# is started per mode). The manifests record Inductor cache hits (compile.fxgraph_cache_hits) and
# that variable (environment.env): a warm cache makes first_call_s of the compile modes smaller
# than a cold compile.
set -u
out=${1:?OUT_DIR}; budget=${2:?BUDGET_S}; shift 2
phases=${PHASES:-1 2}; est=${EST_S:-240}
mkdir -p "$out" runs
export PYTHONUNBUFFERED=1
start=$(date +%s)
log="$out/driver.log"
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }

if [[ " $phases " == *" 1 "* ]]; then
  say "phase 1: warming Inductor caches for: $*"
  warm=$(mktemp -d)
  for w in "$@"; do
    python3 -m traceviz profile "workloads/$w.py" --out "$warm/$w" --no-stack \
      --modes compile,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
      --repeats 1 --warmup 1 --min-repeat-ms 1 --timeout 300 > "$warm/$w.out" 2>&1 &
  done
  wait
  say "phase 1 done"
fi
[[ " $phases " == *" 2 "* ]] || exit 0

for w in "$@"; do
  if (( $(date +%s) - start + est > budget )); then
    say "SKIPPED $w: budget spent"
    continue
  fi
  say "phase 2: $w"
  TORCHINDUCTOR_COMPILE_THREADS=1 \
    python3 -m traceviz profile "workloads/$w.py" --modes all --out "runs/$w" --force \
    --timeout 240 2>&1 | tee -a "$log"
  tar -czf "$out/$w.tar.gz" -C runs "$w"
  say "packed $w ($(du -h "$out/$w.tar.gz" | cut -f1))"
done
