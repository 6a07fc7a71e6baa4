# Every target works offline once `go mod download` has run.
GO ?= go
PKGS ?= ./...
FUZZTIME ?= 10s
BENCHTIME ?= 1s

.PHONY: all test test-short bench fuzz fuzz-long lint vet fmt-check tidy-check

all: lint test

## test: the full test suite with the race detector (the README's test command)
test:
	$(GO) test -race -count=1 $(PKGS)

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

## lint: go vet plus a gofmt check
lint: vet fmt-check

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
