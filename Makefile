# The front door: `make test` and `make demo`. Each installs missing Debian packages (as root;
# otherwise prints the apt-get line and stops), configures, builds and runs.
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
ARGS ?=

BUILD_PACKAGES := cmake ninja-build g++ pkg-config catch2 libfmt-dev libopenblas-dev nlohmann-json3-dev \
                  zlib1g-dev libbenchmark-dev openmpi-bin libopenmpi-dev libcli11-dev
# The demos' data, and gnuplot for their pictures of training (PREFIX.png).
DEMO_PACKAGES := dataset-fashion-mnist gnuplot-nox
DEMO_GPT_PACKAGES := fortunes gnuplot-nox
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
# make bench's baselines, plots and page-fault count: LibTorch (benchmarks/libtorch), PyTorch, gnuplot, perf.
BENCH_PACKAGES := libtorch-dev python3-torch gnuplot-nox python3 linux-perf
DOCS_PACKAGES := graphviz
FORMAT_PACKAGES := clang-format-14
FUZZ_SECONDS ?= 600
# The asan preset compiles with clang 14 and builds the fuzzers too (Note [One sanitizer build]).
ifeq ($(PRESET),asan)
BUILD_PACKAGES += $(FUZZ_PACKAGES)
endif

# make demo-ddp's processes: one per GPU where nvidia-smi lists GPUs (the demo then picks the
# nccl backend), else 2 CPU processes (mpi).
GPUS := $(shell nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
RANKS ?= $(if $(filter-out 0,$(GPUS)),$(GPUS),2)
MPIRUN := mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none

.PHONY: all deps demo-deps demo-gpt-deps configure build test demo demo-ddp demo-gpt bench fuzz docs format format-check gpu-deps clean

all: build

deps:
	@scripts/install-deps.sh $(BUILD_PACKAGES)

demo-deps:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(DEMO_PACKAGES)

demo-gpt-deps:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(DEMO_GPT_PACKAGES)

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j $(JOBS)

demo: demo-deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target demo
	@$(BUILD_DIR)/examples/demo $(ARGS)

# The demo with DistributedDataParallel over RANKS processes on this machine, launched by mpirun
# (docs/distributed.md; ARGS as for `make demo`, e.g. ARGS=--resume): one per GPU with the nccl
# backend on a GPU machine, else 2 CPU processes with mpi.
demo-ddp: demo-deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target demo
	@$(MPIRUN) -np $(RANKS) $(BUILD_DIR)/examples/demo --ddp $(ARGS)

# The character-level GPT on Debian's fortunes (examples/char_gpt.cpp; ARGS as for `make demo`,
# e.g. ARGS=--resume, or ARGS="--sample 500 --prompt 'The '" to write text from the checkpoint).
demo-gpt: demo-gpt-deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target char_gpt
	@$(BUILD_DIR)/examples/char_gpt $(ARGS)

# libFuzzer harnesses (built in build/asan: clang, ASan + UBSan): replay the corpus, then fuzz each
# harness for FUZZ_SECONDS (default 600). docs/hostile-input.md.
fuzz:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(FUZZ_PACKAGES)
	@JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_SECONDS)

# Every benchmark, with the LibTorch and PyTorch baselines, into $(BUILD_DIR)/bench-report/
# (report.md with ratio tables and PNG plots). Configures after installing the baselines, so that
# CMake finds LibTorch.
bench:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(BENCH_PACKAGES)
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@scripts/run-benchmarks.sh $(BUILD_DIR)

# The tour's pictures (docs/tour/img/*.svg), drawn by the examples and rendered with Graphviz.
docs:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(DOCS_PACKAGES)
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target tour_01_tensor tour_02_autograd tour_03_module explain_replicate \
	  tour_07_ddp tour_10_checkpoint tour_11_join
	@MPIRUN="$(MPIRUN)" scripts/render-docs.sh $(BUILD_DIR)

# clang-format-14 over every C++/CUDA source (format), or only check it (format-check, as CI).
format:
	@scripts/install-deps.sh $(FORMAT_PACKAGES)
	@scripts/format.sh

# The Debian packages a GPU machine without them needs for scripts/gpu-check.sh, into .gpu-deps
# (docs/cuda.md, "Running the GPU check").
gpu-deps:
	@scripts/gpu-deps.sh fetch .gpu-deps

format-check:
	@scripts/install-deps.sh $(FORMAT_PACKAGES)
	@scripts/format.sh --check

clean:
	rm -rf build
