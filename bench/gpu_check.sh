#!/usr/bin/env bash
# The whole project on a real GPU, in one command: build the native extension in place, run
# the test suite on the GPU (no TRITON_INTERPRET), time bench/gpu_ops.py and every other GPU
# benchmark into bench/results/<date>-<device>.md, and print a short table last.
#
#   bench/gpu_check.sh [pytest arguments...]      (default: the whole of tests/)
#
# Needs python3 with numpy, pyyaml, pytest, triton, torch and pybind11 (the GPU machines'
# image has them) and nothing from the network. The one package that image lacks,
# scipy-openblas32 (OpenBLAS for the CPU backend), is installed from wheels in .whl/ when
# it is missing; fetch it beforehand on a machine with network access, e.g.
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --platform manylinux2014_x86_64 -d .whl scipy-openblas32
# Environment: PYTHON (default python3), JOBS (pytest workers, default 8), OUT (if set, a
# folder that receives the test log and the benchmark table), BENCH_ARGS (e.g. --quick),
# OTHER_BENCH_ARGS (for the benchmarks after gpu_ops.py; default BENCH_ARGS), BENCHES (which
# of them), NO_TESTS=1 / NO_BENCH=1 to leave a step out (each run must fit the machine's time limit),
# TEST_LIST (a file of test node ids, one per line, appended to the pytest arguments as they
# are: ids hold spaces, so they cannot pass through a command line), TEST_TIMEOUT /
# BENCH_TIMEOUT (seconds; the step is interrupted with SIGINT, so pytest still
# prints what failed so far), SKIP_BUILD=1 to use a framework/_C*.so carried from an earlier
# run (the build also leaves a stripped copy of it in OUT for that).
#
# With a lease of 15 minutes of device time (a call spends 30-90 s starting the machine, and
# the machine stays warm 30 s after a call, so calls made at once need no new start), the
# whole cuda half does not fit with the benchmarks. What the third session learnt:
# - the 7,500 cuda tests run at about 15 a second on 16 workers (first compiles included):
#   about 500 s; the build takes 136-150 s. Order the files so that what never ran on a GPU
#   comes first, and keep a junit file to know what was reached:
#     JOBS=16 TEST_TIMEOUT=380 NO_BENCH=1 bench/gpu_check.sh -k cuda --timeout 120 \
#         --junitxml=$OUT/junit.xml tests/test_new.py ... tests
#   naming test FILES only (helper scripts under tests/ fail to collect);
# - the tests not reached go in a file of node ids for the next call: TEST_LIST=ids.txt
#   (the ids hold spaces);
# - on a cold machine each benchmark needs a minute (torch's import, Triton's first compiles
#   and autotuning) even with --quick: BENCH_TIMEOUT=60 at least; train.py --quick 100-150 s.
# What the fourth session learnt:
# - TEST_LIST with 1,787 ids collected nothing on the device (exit 5): its pytest 9.1.1
#   cannot select an id holding `<lambda>`, and one bad id stops the run; the ids now pass
#   through bench/test_ids.py (such ids, and stale ones, become their test function);
# - the extension can be built here for the device's Python 3.12 and carried (SKIP_BUILD=1),
#   saving the build's device time: in a checkout, with pyenv's 3.12 and a venv holding
#   pybind11, numpy and scipy-openblas32,
#     FRAMEWORK_ARCH=x86-64-v3 python3.12 setup.py -q build_ext --inplace
#   (x86-64-v3: the device's CPU is not this one; the OpenBLAS library is found at import).
# Before spending device time, `make compile-check COMPILE_CHECK_TESTS=tests` compiles every
# kernel the tests launch for sm_90 on a machine without a GPU.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
JOBS=${JOBS:-8}
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET
# the benchmarks import framework from the checkout, wherever they are started from
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
RESULTS=bench/results
mkdir -p "$RESULTS"
LOGDIR=${OUT:-$RESULTS}
LOG="$LOGDIR/gpu_check_tests.log"
summary=()
note() { summary+=("| $1 | $2 |"); }

finish() {
    echo
    echo "| step | result |"
    echo "| --- | --- |"
    printf '%s\n' "${summary[@]}"
    exit "$1"
}

# -- the machine ------------------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none); nothing to check."
    note "GPU" "none found"
    finish 0
fi
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
note "GPU" "$GPU_NAME, driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)"
note "python" "$($PY -c 'import sys, triton; print(sys.version.split()[0], "triton", triton.__version__)' 2>&1)"

# -- dependencies that may have to come as wheels -------------------------------------------
if ! $PY -c "import scipy_openblas32" 2>/dev/null; then
    if ls .whl/*.whl >/dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site .whl/*.whl || { note "wheels" "install failed"; finish 1; }
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
        note "wheels" "installed from .whl/: $(cd .whl && ls *.whl | tr '\n' ' ')"
    else
        echo "gpu_check: scipy_openblas32 is missing and .whl/ has no wheels (see the header)."
        note "build" "scipy_openblas32 missing"
        finish 1
    fi
fi

# -- build ------------------------------------------------------------------------------------
t0=$(date +%s)
if [ -n "${SKIP_BUILD:-}" ] && ls framework/_C*.so >/dev/null 2>&1; then
    note "build" "skipped: carried $(ls framework/_C*.so)"
elif ! FRAMEWORK_BUILD_JOBS=$(nproc) $PY setup.py -q build_ext --inplace >"$LOGDIR/gpu_check_build.log" 2>&1; then
    tail -n 40 "$LOGDIR/gpu_check_build.log"
    note "build" "FAILED (log: $LOGDIR/gpu_check_build.log)"
    finish 1
else
    note "build" "ok in $(( $(date +%s) - t0 )) s"
    [ -n "${OUT:-}" ] && strip -o "$OUT/$(basename framework/_C*.so)" framework/_C*.so
fi
if ! $PY -c "import framework as fw; assert fw.cuda.is_available() and not fw.cuda.is_simulated(); print(fw.cuda.get_device_name())"; then
    note "framework.cuda" "NOT AVAILABLE on the GPU"
    finish 1
fi
$PY -c "import framework as fw; x = fw.arange(1000, device='cuda', dtype=fw.float32); print('smoke: sum(2x) =', (x * 2).sum().item(), '(expected 999000)')" || note "smoke" "FAILED: (x * 2).sum() on cuda"


# -- tests on the GPU ---------------------------------------------------------------------------
test_rc=0
if [ -z "${NO_TESTS:-}" ]; then
    t0=$(date +%s)
    if [ -n "${TEST_LIST:-}" ]; then
        # as the current code and this pytest can select them (bench/test_ids.py)
        mapfile -t _ids < <($PY bench/test_ids.py "$TEST_LIST")
        set -- "$@" "${_ids[@]}"
    fi
    if [ "$#" -eq 0 ]; then set -- tests; fi
    export FW_FAILURE_LOG="$LOGDIR/gpu_check_failures.log"
    rm -f "$FW_FAILURE_LOG"
    timeout -s INT -k 30 "${TEST_TIMEOUT:-0}" \
        $PY -m pytest -q -p no:benchmark -n "$JOBS" -p no:cacheprovider --durations=10 -rfE "$@" >"$LOG" 2>&1
    test_rc=$?
    tail -n 60 "$LOG"
    counts=$(grep -E '[0-9]+ (passed|failed|error)' "$LOG" | tail -n1 | sed 's/=//g')
    [ -f "$FW_FAILURE_LOG" ] && note "failures" "$(grep -c '^FAILED' "$FW_FAILURE_LOG") (log: $FW_FAILURE_LOG)"
    args="$*"
    [ "${#args}" -gt 120 ] && args="${args:0:120}..."
    note "tests ($args)" "${counts:-no summary line} in $(( $(date +%s) - t0 )) s (rc $test_rc; log: $LOG)"
fi

# -- benchmarks -------------------------------------------------------------------------------
slug=$(echo "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
BENCH_OUT="$RESULTS/$(date -u +%Y-%m-%d)-$slug.md"
if [ -n "${NO_BENCH:-}" ]; then finish "$test_rc"; fi
t0=$(date +%s)
# shellcheck disable=SC2086
if timeout -s INT -k 10 "${BENCH_TIMEOUT:-0}" $PY bench/gpu_ops.py --out "$BENCH_OUT" ${BENCH_ARGS:-} >"$LOGDIR/gpu_check_bench.log" 2>&1 \
        && [ -f "$BENCH_OUT" ]; then
    note "bench gpu_ops.py" "ok in $(( $(date +%s) - t0 )) s"
else
    tail -n 30 "$LOGDIR/gpu_check_bench.log"
    note "bench gpu_ops.py" "FAILED (log: $LOGDIR/gpu_check_bench.log)"
    test_rc=1
fi
# the other GPU benchmarks (nn layers, fused kernels, optimizer steps, the demo's training
# step), each beside torch on this device; their tables are appended to the results file.
# BENCHES picks a subset, e.g. BENCHES="fused_layers.py optim.py".
OTHER_ARGS=${OTHER_BENCH_ARGS-${BENCH_ARGS:-}}
for b in ${BENCHES:-gpu_launch.py host_step.py nn.py fused_norm.py fused_loss.py fused_attention.py fused_layers.py optim.py cuda_graphs.py train.py}; do
    [ -f "$BENCH_OUT" ] || echo "# GPU benchmarks, $GPU_NAME, $(date -u +%Y-%m-%d)" >"$BENCH_OUT"
    t0=$(date +%s)
    log="$LOGDIR/gpu_check_${b%.py}.log"
    # shellcheck disable=SC2086
    if timeout -s INT -k 10 "${BENCH_TIMEOUT:-0}" $PY "bench/$b" --device cuda $OTHER_ARGS >"$log" 2>&1; then
        { echo; echo "## bench/$b --device cuda $OTHER_ARGS"; echo; echo '```'; cat "$log";
          echo '```'; } >>"$BENCH_OUT"
        note "bench $b" "ok in $(( $(date +%s) - t0 )) s"
    else
        tail -n 20 "$log"
        note "bench $b" "FAILED (log: $log)"
        test_rc=1
    fi
done
if [ -f "$BENCH_OUT" ]; then
    [ -n "${OUT:-}" ] && cp "$BENCH_OUT" "$OUT/"
    echo
    cat "$BENCH_OUT"
fi
finish "$test_rc"
