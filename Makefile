# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine with
# Python >= 3.10 and a C++17 compiler: they create .venv and install everything.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
JOBS ?= 2

.PHONY: install build demo test bench clean

install: $(VENV)/.installed build

# Dependencies and the editable install, redone when the packaging changes.
$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "setuptools>=68" wheel "pybind11>=2.12" "scipy-openblas32>=0.3.27" numpy pyyaml
	# torch is only a test oracle and benchmark reference; tests that need it skip without it
	$(PY) -m pip install -q torch==2.13.0 || echo "note: torch==2.13.0 not installed (oracle tests will skip)"
	$(PY) -m pip install -q --no-build-isolation -e ".[test]"
	touch $@

# Incremental native build (only changed .cpp files recompile).
build: $(VENV)/.installed
	FRAMEWORK_BUILD_JOBS=$(JOBS) $(PY) setup.py -q build_ext --inplace

demo: install
	$(PY) examples/train.py
	$(PY) examples/tour.py

# Every test on cpu, and on cuda: a real GPU if present, else Triton's interpreter.
test: install
	TRITON_INTERPRET=$${TRITON_INTERPRET-$$( $(PY) -c "import ctypes.util as u; print(0 if u.find_library('cuda') else 1)")} \
	$(PY) -m pytest -q -n $(JOBS) -p no:cacheprovider tests

bench: install
	$(PY) bench/cpu_ops.py

clean:
	rm -rf build framework/*.so $(VENV)
