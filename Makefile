# The test command CI runs (see .ci/run): formatting, vet, then every test
# with the race detector.
.PHONY: test demo

test:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./... ./testdata  # ./... skips directories named testdata
	go test -race -timeout 20m ./...

demo:
	go run ./cmd/semrank demo
