# Every target works offline once `go mod download` has run.
GO ?= go
PKGS ?= ./...
FUZZTIME ?= 10s
BENCHTIME ?= 1s

.PHONY: all test test-short bench fuzz fuzz-long lint vet fmt-check tidy-check demo conformance

all: lint test

## test: the full test suite with the race detector (the README's test command)
test:
	$(GO) test -race -count=1 $(PKGS)

## conformance: the suite against real peers (docker-registry, skopeo, the real
## ecr-credential-provider), installed first by testing/conformance/setup.sh
## (apt-get as root, provider built into ~/.cache/hypershift-ecr); see docs/conformance.md
ECR_PROVIDER_VERSION ?= v1.37.1
conformance:
	@provider="$$(ECR_PROVIDER_VERSION=$(ECR_PROVIDER_VERSION) GO=$(GO) bash testing/conformance/setup.sh)" && \
	ECR_CREDENTIAL_PROVIDER="$$provider" ECR_PROVIDER_VERSION=$(ECR_PROVIDER_VERSION) \
	  $(GO) test -tags conformance -count=1 -v -timeout 15m ./testing/conformance/

test-short:
	$(GO) test -short -count=1 $(PKGS)

## bench: every benchmark, with allocations
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

## fuzz: each fuzz target for FUZZTIME (default 10s); fuzz-long for 5 minutes each
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

## lint: go vet, a gofmt check and a go.mod that needs no tidying
lint: vet fmt-check tidy-check

tidy-check:
	$(GO) mod tidy -diff

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: the README's first command: mirror a release to a fake ECR, resolve it, rotate tokens (offline)
demo:
	$(GO) run ./cmd/hypershift-ecr demo

## bench-compare: side-by-side benchmarks against the anchors (ecr-login, the bare SDK, a naive
## full-image read) in the nested module testing/benchcompare, all in one process, then one table
## of medians and the issue's claims (exit 1 if one is not met); see docs/performance.md
BENCH_COMPARE_COUNT ?= 5
.PHONY: bench-compare
bench-compare:
	@out="$$(mktemp)" && trap 'rm -f "$$out"' EXIT && cd testing/benchcompare && \
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCH_COMPARE_COUNT) -timeout 60m | tee "$$out" && \
	echo && $(GO) test -run '^$$' -args -summary="$$out"

## stress: the keychain under 10,000 goroutines for STRESS_DURATION (60s) with the race detector,
## tokens rotating every second and random ECR faults (TestStress; `make test` runs it for 5s);
## stress-long for 10 minutes
STRESS_DURATION ?= 60s
.PHONY: stress stress-long
stress:
	STRESS_DURATION=$(STRESS_DURATION) $(GO) test -race -count=1 -run '^TestStress$$' -v -timeout 30m ./registryauth/

stress-long:
	$(MAKE) stress STRESS_DURATION=10m
