# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine with
# Python >= 3.10 and a C++17 compiler: they create .venv and install everything.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
JOBS ?= 2

.PHONY: install build demo test compile-check bench clean asan

install: $(VENV)/.installed build

# Dependencies and the editable install, redone when the packaging changes.
$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "setuptools>=68" wheel "pybind11>=2.12" "scipy-openblas32>=0.3.27" numpy pyyaml
	# torch is only a test oracle and benchmark reference; tests that need it skip without it
	$(PY) -m pip install -q torch==2.13.0 || echo "note: torch==2.13.0 not installed (oracle tests will skip)"
	$(PY) -m pip install -q --no-build-isolation -e ".[test]"
	# MPI for framework.distributed (its tests skip without it)
	$(PY) -m pip install -q mpich "mpi4py>=4" || echo "note: mpich/mpi4py not installed (distributed tests will skip)"
	touch $@

# Incremental native build (only changed .cpp files recompile).
build: $(VENV)/.installed
	FRAMEWORK_BUILD_JOBS=$(JOBS) $(PY) setup.py -q build_ext --inplace

# The demo's extra (tqdm, matplotlib), then a GPT trained on the standard library's source.
demo: install $(VENV)/.demo-installed
	$(PY) examples/train_gpt.py

$(VENV)/.demo-installed: $(VENV)/.installed
	$(PY) -m pip install -q --no-build-isolation -e ".[demo]"
	touch $@

# Every test on cpu, and on cuda: a real GPU if present, else Triton's interpreter. Without
# a GPU, the core kernels' tests then run once more with each launched kernel also compiled
# for sm_90 (tests/compile_check.py: what only a real compile shows, the interpreter never).
# SIM: 1 when cuda is simulated (TRITON_INTERPRET as set, else 1 without a CUDA driver)
SIM = $${TRITON_INTERPRET-$$( $(PY) -c "import ctypes.util as u; print(0 if u.find_library('cuda') else 1)")}
COMPILE_CHECK_TESTS ?= tests/kernels tests/test_pointwise.py tests/test_reduction.py \
  tests/test_inductor_gemm.py tests/nn/test_varlen_attention.py
test: install
	TRITON_INTERPRET=$(SIM) \
	$(PY) -m pytest -q -n $(JOBS) -p no:cacheprovider --durations=30 tests
	if [ "$(SIM)" = 1 ]; then \
	  $(MAKE) --no-print-directory compile-check; fi

# Every kernel the given tests launch, compiled for a Hopper GPU without one (a full check:
# COMPILE_CHECK_TESTS=tests, about 30 minutes on 2 cores).
# The GEMM's own kernel tests name no device and are selected by name: their split-K
# float64 case once compiled in the interpreter only (a dead branch's types, sm_90 refused).
compile-check: install
	TRITON_INTERPRET=1 FW_COMPILE_CHECK=1 $(PY) -m pytest -q -n $(JOBS) -p no:cacheprovider \
	  $(COMPILE_CHECK_TESTS) -k "cuda or test_linalg_kernels"

# The native library under AddressSanitizer + UndefinedBehaviorSanitizer, over the test suite
# (not part of `make test`: it is slow). It never touches framework/_C*.so here: it snapshots
# the working files (tracked, and untracked-but-not-ignored; uncommitted edits included) into
# $(ASAN_DIR)/snap, then syncs them into $(ASAN_DIR)/tree copying only files whose content
# differs, with a fresh mtime (source mtimes cannot be kept: a file edited after one snapshot
# but before its object finished compiling would look older than that object, and stay
# stale); tree/build/temp and the built _C*.so are kept, so rebuilds are incremental. It
# builds the extension in place there with FRAMEWORK_SANITIZE=1 (see setup.py), and runs
# pytest from that tree with this .venv's python. `import framework` finds the copy
# because the tree is the cwd and on PYTHONPATH: both come before the editable install's
# finder, which setuptools appends to the end of sys.meta_path; a check below asserts it.
# Python is not sanitized, so libasan is preloaded (libubsan comes in as _C's dependency),
# and libstdc++ with it: else ASan's __cxa_throw interceptor finds no real __cxa_throw
# (python does not link libstdc++) and the first C++ exception aborts with "CHECK failed".
# Sanitizer reports go to $(ASAN_DIR)/logs/ (not stderr, where pytest's capture would lose
# them when a worker dies), and are appended to $(ASAN_DIR)/report.txt after pytest's output.
# Leak checks are off (CPython leaks at exit by design); allocator_may_return_null=1 so that
# a huge allocation fails the way it does without ASan (tests expect OutOfMemoryError).
# Fails when pytest fails or any sanitizer report was written. ASAN_TESTS picks the tests.
ASAN_DIR := build/asan
ASAN_TREE := $(ASAN_DIR)/tree
ASAN_TESTS ?= tests
ASAN_PYTEST_ARGS ?= -q -rf -n $(JOBS) -p no:cacheprovider

asan: $(VENV)/.installed
	rm -rf $(ASAN_DIR)/snap && mkdir -p $(ASAN_DIR)/snap $(ASAN_TREE)
	git ls-files -z --cached --others --exclude-standard \
	  | tar --null -T - --ignore-failed-read -cf - | tar -xf - -m -C $(ASAN_DIR)/snap
	cd $(ASAN_DIR)/snap && find . -type f | while read -r f; do cmp -s "$$f" "../tree/$$f" \
	  || { mkdir -p "../tree/$${f%/*}" && cp "$$f" "../tree/$$f"; }; done
	cd $(ASAN_TREE) && find . \( -path ./build -o -name '_C*.so' \) -prune -o -type f -print \
	  | while read -r f; do [ -e "../snap/$$f" ] || rm -f "$$f"; done
	cd $(ASAN_TREE) && FRAMEWORK_SANITIZE=1 FRAMEWORK_BUILD_JOBS=$(JOBS) \
	  nice -n 10 $(CURDIR)/$(PY) setup.py -q build_ext --inplace
	rm -rf $(ASAN_DIR)/logs && mkdir -p $(ASAN_DIR)/logs
	cd $(ASAN_TREE) && export PYTHONPATH=$(CURDIR)/$(ASAN_TREE) TRITON_INTERPRET=1 \
	  LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:log_path=$(CURDIR)/$(ASAN_DIR)/logs/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/$(ASAN_DIR)/logs/ubsan \
	  && $(CURDIR)/$(PY) -c "import framework, framework._C as c; \
	    assert framework.__file__.startswith('$(CURDIR)/$(ASAN_TREE)/'), framework.__file__; \
	    print('sanitized build:', c.__file__)" \
	  && { nice -n 10 $(CURDIR)/$(PY) -m pytest $(ASAN_PYTEST_ARGS) $(ASAN_TESTS) \
	       > $(CURDIR)/$(ASAN_DIR)/report.txt 2>&1; echo $$? > $(CURDIR)/$(ASAN_DIR)/pytest.rc; }
	tail -n 30 $(ASAN_DIR)/report.txt
	@# the out-of-memory tests leave "failed to allocate" warnings in logs/: not findings
	@cd $(ASAN_DIR) && found=$$(grep -lE "ERROR: [A-Za-z]+Sanitizer|runtime error:" logs/* \
	  2>/dev/null); if [ -n "$$found" ]; then \
	  for f in $$found; do echo "=== $$f"; cat $$f; done >> report.txt; \
	  echo "sanitizer reports: $$(echo $$found | wc -w) (in $(ASAN_DIR)/report.txt)"; exit 1; fi; \
	  echo "no sanitizer reports"; exit $$(cat pytest.rc)

# Every benchmark under bench/ that has a quick mode, into bench/report.md (and charts);
# `make bench QUICK=1` passes --quick to each.
bench: install
	$(PY) bench/report.py $(if $(QUICK),--quick)

clean:
	rm -rf build framework/*.so $(VENV)
