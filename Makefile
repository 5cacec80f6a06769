# dgen: the two commands are `make demo` and `make test`. Both install what
# is missing first (as root on Debian/Ubuntu; see scripts/deps.sh); deps is
# the only target that installs anything, and go test never runs it.

GO      ?= go
BENCH   ?= .
BUNDLE  ?= gpu-bundle

.PHONY: all deps demo run-demo test vet cross check-generated generate bench bench-go bench-stencil bench-scaling bench-table gpu-bundle rawcl clean

all: test

deps:
	@sh scripts/deps.sh

## demo: install what is missing (deps), then run-demo.
## run-demo: run the examples on the device DGEN_DEVICE selects (default: a
## GPU, else PoCL), installing nothing. It builds them first, saying so: a
## first run compiles dgen's runtime with cgo (a minute or two), go build -v
## naming each package as it goes, and then each program's kernels (seconds
## each on PoCL; cached after).
DEMO_BIN ?= bin/demo
demo: deps
	@$(MAKE) --no-print-directory run-demo

run-demo:
	@echo "demo: building the examples into $(DEMO_BIN)/ (a first run compiles dgen's runtime with cgo: a minute or two; each package is named as it compiles)"
	@mkdir -p $(DEMO_BIN) && $(GO) build -v -o $(DEMO_BIN)/ ./examples/quickstart ./examples/rawquickstart ./examples/devglobal ./examples/imaging ./examples/stencil ./examples/kmeans
	@echo "demo: quickstart: saxpy declared with //dgen: directives (go generate wrote its launch code), verified against Go (a first run compiles the kernel for the device)"
	@$(DEMO_BIN)/quickstart
	@echo "demo: rawquickstart: the same saxpy built from source at run time through rt/raw, arguments set by hand"
	@$(DEMO_BIN)/rawquickstart
	@echo "demo: devglobal: every kind of device global (a first run compiles its programs)"
	@$(DEMO_BIN)/devglobal
	@echo "demo: imaging: a blur, Sobel and wavelet pipeline on images and on buffers, every pixel checked against Go"
	@$(DEMO_BIN)/imaging
	@echo "demo: stencil: Rodinia's Hotspot under each allocator policy"
	@$(DEMO_BIN)/stencil -alloc=all -size 256 -iters 60 -pyramid 2
	@echo "demo: kmeans: k-means clustering, one recorded graph per (D, K) reused by 16 requests at once"
	@$(DEMO_BIN)/kmeans

## test: vet (with dgen's analyzer on the examples too), build and vet for
## other systems without cgo (cross), build dgen without cgo, check that
## generated code is fresh, and run every test with the race detector.
test: deps
	$(GO) vet ./...
	@$(MAKE) --no-print-directory cross
	@mkdir -p bin && $(GO) build -o bin/dgen-vet ./cmd/dgen-vet
	$(GO) vet -vettool=$(CURDIR)/bin/dgen-vet ./examples/...
	@$(MAKE) --no-print-directory check-generated
	$(GO) test -race -count=1 -timeout 30m ./...

## cross: build and vet rt, rt/diskcache and cmd/dgen for each of CROSS_OS
## without cgo, as an application that imports them is built there.
CROSS_OS  ?= windows darwin
CROSS_PKG ?= ./rt ./rt/internal/core ./rt/diskcache ./cmd/dgen
cross:
	@for os in $(CROSS_OS); do echo "cross: GOOS=$$os CGO_ENABLED=0 go build and go vet $(CROSS_PKG)"; \
		CGO_ENABLED=0 GOOS=$$os $(GO) build $(CROSS_PKG) && CGO_ENABLED=0 GOOS=$$os $(GO) vet $(CROSS_PKG) || exit 1; done

## generate: run go generate over the module.
generate:
	$(GO) generate ./...

## check-generated: build dgen with CGO_ENABLED=0 (the generator needs no
## cgo or OpenCL) and fail when regenerating any package that runs dgen
## would change a file (dgen -check ./...), or when rt's facade is not
## what mkfacade writes from rt/internal/core (go generate ./rt).
check-generated:
	CGO_ENABLED=0 $(GO) run ./rt/internal/cmd/mkfacade -check
	@mkdir -p bin && CGO_ENABLED=0 $(GO) build -o bin/dgen ./cmd/dgen
	bin/dgen -check ./...

## bench: run the Go benchmarks (BENCH selects them by regexp), then the
## Hotspot example in every mode beside PyOpenCL (SIZES, PYRAMIDS, ITERS,
## REPS: see scripts/bench-stencil.sh).
bench: bench-go bench-stencil

bench-go: deps
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem ./...

bench-stencil: deps
	GO=$(GO) sh scripts/bench-stencil.sh

## bench-scaling: G goroutines, each with a queue, against G pthreads in
## one process (bench/scaling): a launch loop, a request loop, and a
## goroutine per request against a C thread pool (serve), on BACKEND (cpu:
## PoCL; cuda or opencl: an NVIDIA GPU).
BACKEND ?= cpu
bench-scaling: deps
	$(GO) run ./bench/scaling -backend $(BACKEND)

## bench-table: Futhark's allocator table on dgen (examples/suite): per
## program and dataset, each allocator policy's speedup over allocating from
## the driver, beside Futhark's figure; rows also as JSON lines in
## TABLE_JSON. TABLE_REPS timed runs per mode; TABLE_FLAGS=-gpu for the
## table's sizes (on a GPU: gpu-bundle/run.sh gpu-bundle/suite -gpu).
TABLE_REPS ?= 5
TABLE_JSON ?= bench-table.jsonl
bench-table: deps
	$(GO) run ./examples/suite -reps $(TABLE_REPS) -json $(TABLE_JSON) $(TABLE_FLAGS)

## gpu-bundle: build, stripped, into $(BUNDLE)/ the test binaries of
## BUNDLE_TESTS, the commands of BUNDLE_CMDS, rawcl and the scripts, to run
## on a GPU machine that has no Go: copy it there and run $(BUNDLE)/run.sh,
## or $(BUNDLE)/bench-gpu.sh for the launch and Hotspot figures against
## rawcl, $(BUNDLE)/launch-gpu.sh for the launch path's (issue 45: the
## launch loop against the cgo floor, Hotspot and its graph against raw C
## and CuPy, device times per kernel from CUPTI through libkerneltime.so),
## $(BUNDLE)/fault-gpu.sh for the device-fault figures (with
## BUNDLE_TESTS="rt bench/faultloop" it runs the fault loop's
## GPU test too), $(BUNDLE)/ops-gpu.sh for issue 54's checks (the memory
## budget against the driver's free memory, Shutdown in flight, Health
## after a fault). The defaults are what those scripts and docs/BENCHMARKS.md run
## (about 70 MB: compress it to carry it where 64 MiB is the limit); BUNDLE_TESTS=all takes every package whose tests use a
## device (they import a backend; cmd/dgen's, golden's and the module
## root's need Go), BUNDLE_CMDS=all every example. rt's tests are
## rt.test.
BUNDLE_TESTS ?= rt rt/raw rt/opencl rt/cuda examples/devglobal examples/stencil
BUNDLE_CMDS  ?= cmd/dgen examples/stencil examples/suite examples/search examples/kmeans bench/inproc bench/faultloop bench/specmix bench/soak bench/scaling bench/priority
gpu-bundle: deps
	rm -rf $(BUNDLE) && mkdir -p $(BUNDLE)
	tests="$(BUNDLE_TESTS)"; [ "$$tests" != all ] || tests=$$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}{{end}}' ./... | \
			awk '/dgen\/rt\/(opencl|cuda|backends)( |$$)/ && $$1 !~ /(cmd\/dgen|golden|dgen)$$/ {print $$1}'); \
	for p in $$tests; do p=$${p#github.com/dgen-go/dgen/}; \
		$(GO) test -c -ldflags="-s -w" -o $(BUNDLE)/$$(echo $$p | sed 's|/|_|g').test ./$$p || exit 1; done
	cmds="$(BUNDLE_CMDS)"; [ "$$cmds" != all ] || cmds="cmd/dgen $$(ls -d examples/*/)"; \
	for d in $$cmds; do $(GO) build -ldflags="-s -w" -o $(BUNDLE)/$$(basename $$d) ./$$d || exit 1; done
	cp scripts/gpu-run.sh $(BUNDLE)/run.sh
	cp scripts/bench-trace.sh scripts/bench-gpu.sh scripts/bench-cuda.sh scripts/bench-graph-gpu.sh scripts/bench-inproc.sh scripts/gpu-multi.sh scripts/fault-gpu.sh scripts/spec-gpu.sh scripts/soak-gpu.sh scripts/gpu-tests.sh scripts/ops-gpu.sh $(BUNDLE)/
	cc -O2 -Wall -o $(BUNDLE)/rawcl bench/rawcl/rawcl.c -lOpenCL
	cc -O2 -Wall -o $(BUNDLE)/rawcu bench/rawcu/rawcu.c -lOpenCL -ldl
	cc -O2 -Wall -o $(BUNDLE)/soakcl bench/soakcl/soakcl.c -lOpenCL -ldl
	cc -O2 -Wall -shared -fPIC -o $(BUNDLE)/libkerneltime.so bench/kerneltime/kerneltime.c -ldl -lpthread
	cp examples/stencil/hotspot.cl examples/stencil/cupy/hotspot.py scripts/launch-gpu.sh $(BUNDLE)/

## rawcl: the raw C yardsticks of the GPU figures (bench/rawcl/rawcl.c for
## OpenCL, bench/rawcu/rawcu.c for CUDA's driver API, opened with dlopen).
rawcl: deps
	mkdir -p bin && cc -O2 -Wall -o bin/rawcl bench/rawcl/rawcl.c -lOpenCL
	cc -O2 -Wall -o bin/rawcu bench/rawcu/rawcu.c -lOpenCL -ldl

clean:
	rm -rf $(BUNDLE) bin
