#!/usr/bin/env bash
# Profile the distributed workloads with --nproc on the GPUs of one host and pack each run.
#
# usage: [NPROC=2] [DEVICE=cuda] [TIMEOUT_S=300] [MODES=all] [ARGS="..."] \
#            workloads/run_nproc_gpu.sh OUT_DIR BUDGET_S [RUN...]
#   OUT_DIR   gets <run>.tar.gz (the run directory runs/<run>) and driver.log
#   BUDGET_S  wall-clock seconds for the whole script; a run that could not finish by then
#             (EST_S seconds from its start, default 420) is left out (and said so in driver.log)
#   RUN       any of (default: all, in this order)
#             tp_mlp             workloads/tp_mlp.py, --modes all
#             ddp_mlp            workloads/ddp_mlp.py, --modes all
#             ddp_mlp_straggler  the same with rank 1's host 3 ms late each step
#                                (TRACEVIZ_STRAGGLER_RANK=1, TRACEVIZ_STRAGGLER_DELAY_MS=3)
#             faulty             tests/workloads_for_tests/ddp_faulty.py in eager, compile and
#                                cudagraph, with compile raising and cudagraph hanging on rank 1
#                                (TRACEVIZ_TEST_FAIL): both must end as failed, naming rank 1,
#                                within TIMEOUT_S, and eager must be measured
#   MODES     the --modes of tp_mlp and the ddp_mlp runs (faulty keeps its own three)
#   DEVICE    cuda, or cpu to try the script on gloo ranks (CUDA-only modes are then skipped)
#   ARGS      more `traceviz profile` options for every run (e.g. a shorter --timing-budget-s)
set -u
out=${1:?OUT_DIR}; budget=${2:?BUDGET_S}; shift 2
runs=("$@"); [ ${#runs[@]} -gt 0 ] || runs=(tp_mlp ddp_mlp ddp_mlp_straggler faulty)
nproc=${NPROC:-2}; device=${DEVICE:-cuda}; timeout=${TIMEOUT_S:-300}; est=${EST_S:-420}
mkdir -p "$out" runs
export PYTHONUNBUFFERED=1
start=$(date +%s)
log="$out/driver.log"
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }

for run in "${runs[@]}"; do
  if (( $(date +%s) - start + est > budget )); then
    say "SKIPPED $run: budget spent"
    continue
  fi
  env=(); modes=${MODES:-all}; file="workloads/$run.py"; limit=$timeout
  case $run in
    tp_mlp|ddp_mlp) ;;
    ddp_mlp_straggler)
      file=workloads/ddp_mlp.py
      env=(TRACEVIZ_STRAGGLER_RANK=1 TRACEVIZ_STRAGGLER_DELAY_MS=3) ;;
    faulty)
      file=tests/workloads_for_tests/ddp_faulty.py; modes=eager,compile,cudagraph; limit=120
      env=(TRACEVIZ_TEST_FAIL=compile:1:raise,cudagraph:1:hang) ;;
    *) say "unknown run $run"; continue ;;
  esac
  say "$run: $file --nproc $nproc --modes $modes ${env[*]}"
  begin=$(date +%s)
  # shellcheck disable=SC2086  # ARGS is a list of options
  env "${env[@]}" python3 -m traceviz profile "$file" --nproc "$nproc" --modes "$modes" \
    --device "$device" --out "runs/$run" --force --timeout "$limit" ${ARGS:-} 2>&1 | tee -a "$log"
  say "$run: exit ${PIPESTATUS[0]} after $(( $(date +%s) - begin )) s"
  tar -czf "$out/$run.tar.gz" -C runs "$run"
  say "packed $run ($(du -h "$out/$run.tar.gz" | cut -f1))"
done
